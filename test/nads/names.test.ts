import t from 'tap';
import fc from 'fast-check';
import { dns1123Label, dns1123Subdomain, extendedResourceName, labelValue, qualifiedName } from '../../src/nads/names.js';

t.test('DNS-1123 label (NAD names)', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['macvlan-conf', true],
    ['0net', true], // the net-attach-def admission controller's regex wrongly refused a leading 0
    ['a', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['-net', false], // ... and wrongly accepted a leading '-'
    ['net-', false],
    ['Net', false],
    ['net.a', false],
    ['net_a', false],
    ['', false],
  ];
  for (const [value, ok] of cases) t.equal(dns1123Label(value).length === 0, ok, JSON.stringify(value));
});

t.test('qualified names and label values (nodeSelector)', async (t) => {
  const keys: Array<[string, boolean]> = [
    ['zone', true],
    ['feature.node.kubernetes.io/network-sriov.capable', true],
    ['example.com/My_Key.1', true],
    ['/key', false],
    ['example.com/', false],
    ['a/b/c', false],
    ['Example.com/key', false],
    ['_key', false],
    ['k'.repeat(64), false],
  ];
  for (const [value, ok] of keys) t.equal(qualifiedName(value).length === 0, ok, `key ${JSON.stringify(value)}`);
  const values: Array<[string, boolean]> = [
    ['', true],
    ['true', true],
    ['A_b-1.2', true],
    ['-x', false],
    ['x y', false],
    ['v'.repeat(64), false],
  ];
  for (const [value, ok] of values) t.equal(labelValue(value).length === 0, ok, `value ${JSON.stringify(value)}`);
});

t.test('extended resource names (resourceName annotation)', async (t) => {
  const cases: Array<[string, RegExp | null]> = [
    ['intel.com/sriov_netdevice', null],
    ['mellanox.com/mlnx_sriov_ib', null],
    ['rdma/hpc_shared_devices_ens13f1np1', null],
    ['nvidia.com/gpu', null],
    ['sriov_netdevice', /domain-prefixed/],
    ['kubernetes.io/foo', /kubernetes\.io/],
    ['sub.kubernetes.io/foo', /kubernetes\.io/],
    ['requests.example.com/foo', /requests\./],
    ['Intel.com/x', /subdomain/],
    ['intel.com/', /non-empty/],
    ['intel.com/-x', /name part/],
    ['a/b/c', /qualified name/],
    [`${'a'.repeat(245)}/x`, /quota prefix/],
  ];
  for (const [value, want] of cases) {
    const reasons = extendedResourceName(value).join('; ');
    if (want === null) t.equal(reasons, '', value);
    else t.match(reasons, want, value);
  }
});

t.test('names: subdomain labels of one character, exact reasons', async (t) => {
  for (const ok of ['a.b', 'ab.c', 'a.bc']) t.same(dns1123Subdomain(ok), [], ok);
  t.equal(dns1123Subdomain('a.b_').length, 1, 'the pattern is anchored at the end');
  t.same(qualifiedName('/key'), ['prefix part must be non-empty']);
  t.same(labelValue('-x'), [
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')",
  ]);
  t.same(extendedResourceName(`${'a'.repeat(245)}/x`), [
    "domain must be no more than 244 characters, to leave room for the quota prefix 'requests.'",
  ]);
});

t.test('extendedResourceName: its quick yes agrees with the rules written out (IsExtendedResourceName)', (t) => {
  // The rules as Kubernetes states them, from the qualified-name check alone: the function's quick
  // path for plain names must not accept a name these refuse, nor refuse one they accept.
  const byRules = (v: string): boolean =>
    v.includes('/') &&
    !v.includes('kubernetes.io/') &&
    !v.startsWith('requests.') &&
    qualifiedName(v).length === 0 &&
    qualifiedName(`requests.${v}`).length === 0;
  const part = (max: number) => fc.stringMatching(new RegExp(`^[-a-zA-Z0-9._/]{0,${max}}$`));
  const names = fc.oneof(
    part(20),
    fc.tuple(part(250), part(70)).map(([a, b]) => `${a}/${b}`),
    fc.tuple(fc.integer({ min: 240, max: 256 }), fc.integer({ min: 60, max: 66 })).map(([d, n]) => `${'a'.repeat(d)}/${'b'.repeat(n)}`),
    fc.constantFrom('intel.com/sriov', 'kubernetes.io/x', 'a.kubernetes.io/x', 'requests.a/b', 'a/b/c', '-a/b', 'a./b', 'a/b_', 'A.com/b'),
    // A domain label after a dot that starts or ends with '-' or holds '_': the quick path must refuse it.
    fc.constantFrom('a.-b/x', 'a.b_c/x', 'a._b/x', 'a.b-/x', 'a.b_/x', 'a.b-c.d/x', 'a.b/x-y_z.w'),
    // The same for the first label and the name part.
    fc.constantFrom('a_b/x', 'ab-/x', 'a/_x', 'a/-x', 'a/x.'),
  );
  fc.assert(
    fc.property(names, (v) => {
      t.equal(extendedResourceName(v).length === 0, byRules(v), v);
    }),
    { numRuns: 3000 },
  );
  t.end();
});
