import t from 'tap';
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
