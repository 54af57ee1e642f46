import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { parseNodeSelector, parseResourceNames, resourceNamesFromAnnotations } from '../../src/nads/index.js';
import { NOT_EXTENDED, parseClaimTemplate } from '../../src/nads/annotations.js';

const RN = 'metadata.annotations[k8s.v1.cni.cncf.io/resourceName]';
const NS = 'metadata.annotations[k8s.v1.cni.cncf.io/nodeSelector]';

t.test('resourceName: a comma-separated list of extended resource names', async (t) => {
  const cases: Array<{ text: string; names: string[]; errors: string[]; draOnly?: string[]; warnings?: string[] }> = [
    { text: 'intel.com/sriov_netdevice', names: ['intel.com/sriov_netdevice'], errors: [] },
    { text: ' intel.com/a , intel.com/b ', names: ['intel.com/a', 'intel.com/b'], errors: [] },
    {
      text: 'intel.com/a,,intel.com/b',
      names: ['intel.com/a', 'intel.com/b'],
      errors: [`${RN}: Invalid value: "intel.com/a,,intel.com/b": empty item in the comma-separated list`],
    },
    {
      text: 'intel.com/a,',
      names: ['intel.com/a'],
      errors: [`${RN}: Invalid value: "intel.com/a,": empty item in the comma-separated list`],
    },
    {
      text: '',
      names: [],
      errors: [`${RN}: Invalid value: "": must name at least one extended resource (e.g. intel.com/sriov_netdevice)`],
    },
    // Not an extended resource name: kept apart, a warning (with DRA, Multus matches it to a claimed device).
    {
      text: 'sriov',
      names: [],
      errors: [],
      draOnly: ['sriov'],
      warnings: [
        `${RN}: Invalid value: "sriov": ${NOT_EXTENDED}: must be a domain-prefixed name ('domain/name', e.g. 'intel.com/sriov_netdevice')`,
      ],
    },
    {
      text: 'single-gpu, intel.com/a, single-gpu',
      names: ['intel.com/a'],
      errors: [`${RN}: Duplicate value: "single-gpu": listed more than once`],
      draOnly: ['single-gpu'],
      warnings: [
        /* one warning */ `${RN}: Invalid value: "single-gpu": ${NOT_EXTENDED}: must be a domain-prefixed name ('domain/name', e.g. 'intel.com/sriov_netdevice')`,
      ],
    },
    { text: 'intel.com/a,intel.com/a', names: ['intel.com/a'], errors: [`${RN}: Duplicate value: "intel.com/a": listed more than once`] },
  ];
  for (const c of cases) {
    const got = parseResourceNames(c.text);
    t.same(got.value, c.names, `names of ${JSON.stringify(c.text)}`);
    t.same(got.errors.map(renderError), c.errors, `errors of ${JSON.stringify(c.text)}`);
    t.same(got.draOnly, c.draOnly ?? [], `DRA-only names of ${JSON.stringify(c.text)}`);
    t.same(got.warnings.map(renderError), c.warnings ?? [], `warnings of ${JSON.stringify(c.text)}`);
  }
});

t.test('resource names from several configured annotation keys', async (t) => {
  const got = resourceNamesFromAnnotations(
    { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a', 'example.com/extra-resource': 'example.com/b, intel.com/a', other: 'x' },
    ['k8s.v1.cni.cncf.io/resourceName', 'example.com/extra-resource', 'absent.example.com/key'],
  );
  t.same(got.value, ['intel.com/a', 'example.com/b'], 'in key order, a resource named under two keys once');
  t.same(got.errors, []);
  const bad = resourceNamesFromAnnotations({ 'k8s.v1.cni.cncf.io/resourceName': 5 });
  t.same(bad.value, []);
  t.match(bad.errors.map(renderError), [/must be a string/]);
  t.same(resourceNamesFromAnnotations(undefined).value, []);
});

t.test('nodeSelector: key=value or key, comma-separated', async (t) => {
  const cases: Array<{ text: string; selector: Record<string, string>; errors: RegExp[] }> = [
    { text: 'zone=rack1', selector: { zone: 'rack1' }, errors: [] },
    { text: 'sriov', selector: { sriov: '' }, errors: [] },
    {
      text: ' zone = rack1 , feature.node.kubernetes.io/rdma.capable=true',
      selector: { zone: 'rack1', 'feature.node.kubernetes.io/rdma.capable': 'true' },
      errors: [],
    },
    {
      text: 'a=b=c',
      selector: {},
      errors: [new RegExp(`^${escapeRegExp(NS)}: Invalid value: "a=b=c": must be 'key=value' or 'key' \\(more than one '='\\)$`)],
    },
    { text: 'a=1,,b=2', selector: { a: '1', b: '2' }, errors: [/empty item/] },
    { text: '', selector: {}, errors: [/at least one/] },
    { text: '=x', selector: {}, errors: [/not a valid label key: name part must be non-empty/] },
    { text: 'bad key=x', selector: {}, errors: [/not a valid label key/] },
    { text: 'zone=rack 1', selector: {}, errors: [/not a valid value for label zone/] },
    {
      text: 'zone=a,zone=b',
      selector: { zone: 'b' },
      errors: [/Duplicate value: "zone": label key given twice with different values \("a" and "b"\)/],
    },
    { text: 'zone=a,zone=a', selector: { zone: 'a' }, errors: [] },
  ];
  for (const c of cases) {
    const got = parseNodeSelector(c.text);
    t.same(got.value, c.selector, `selector of ${JSON.stringify(c.text)}`);
    const rendered = got.errors.map(renderError);
    t.equal(rendered.length, c.errors.length, `number of errors of ${JSON.stringify(c.text)}: ${rendered.join(' | ')}`);
    c.errors.forEach((re, i) => t.match(rendered[i], re));
  }
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

t.test('hostile annotations (issue 15, finding 5): no stack overflow, errors capped and counted, linear time', async (t) => {
  const { validateNadObject, nadFromObject } = await import('../../src/nads/index.js');
  const selector = '-,'.repeat(120_000);
  const names = Array.from({ length: 100_000 }, (_, i) => `example.com/r${i}`).join(',');
  const badNames = Array.from({ length: 100_000 }, () => 'not a name').join(',');
  const nad = (annotations: Record<string, string>) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'n', namespace: 'default', annotations },
    spec: { config: '' },
  });
  const started = process.hrtime.bigint();
  const sel = parseNodeSelector(selector);
  t.equal(sel.errors.length, 21, '20 listed and one count');
  // 120,000 invalid keys and the empty item after the last comma.
  t.match(sel.errors[20], { type: 'Too many', value: 120_001 - 20, reason: /^119981 more errors not listed/ });
  const distinct = parseResourceNames(names);
  t.equal(distinct.value.length, 100_000, 'distinct names all kept (a Set, not includes: was quadratic)');
  t.equal(parseResourceNames(badNames).errors.length, 21);
  // The NAD webhook's path: on main, push(...errors) threw "Maximum call stack size exceeded".
  const hostile: Array<Record<string, string>> = [
    { 'k8s.v1.cni.cncf.io/nodeSelector': selector },
    { 'k8s.v1.cni.cncf.io/resourceName': badNames },
  ];
  for (const annotations of hostile) {
    const v = validateNadObject(nad(annotations));
    t.equal(v.errors.length, 21);
    const cached = nadFromObject(nad(annotations));
    t.equal(cached.problems.length, 21, 'the cache keeps 20 problems and a count');
    t.match(cached.problems[20], /more/);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  // Linear time, as a ratio to the same work at an eighth of the size in the same run (a loaded
  // machine slows both): linear is ~8x, the quadratic `includes` this replaced was ~64x.
  const work = (k: number): number => {
    const from = process.hrtime.bigint();
    parseNodeSelector('-,'.repeat(k * 1.2));
    parseResourceNames(Array.from({ length: k }, (_, i) => `example.com/r${i}`).join(','));
    const bad = Array.from({ length: k }, () => 'not a name').join(',');
    const each: Array<Record<string, string>> = [
      { 'k8s.v1.cni.cncf.io/nodeSelector': '-,'.repeat(k * 1.2) },
      { 'k8s.v1.cni.cncf.io/resourceName': bad },
    ];
    for (const annotations of each) {
      validateNadObject(nad(annotations));
      nadFromObject(nad(annotations));
    }
    return Number(process.hrtime.bigint() - from) / 1e6;
  };
  const best = (k: number, runs: number): number => Math.min(...Array.from({ length: runs }, () => work(k)));
  work(12_500);
  const small = best(12_500, 5);
  const large = best(100_000, 3);
  // 32: four times linear's ratio, half the quadratic's; 24 failed once at 25x on a loaded machine.
  t.ok(
    large / small < 32,
    `100,000 items in ${large.toFixed(0)} ms, 12,500 in ${small.toFixed(0)} ms: ${(large / small).toFixed(1)}x for 8x the items (first pass with assertions: ${ms.toFixed(0)} ms)`,
  );
});

t.test('blank values, blank items, reasons joined', async (t) => {
  t.same(parseResourceNames('  ').errors.map(renderError), [
    `${RN}: Invalid value: "  ": must name at least one extended resource (e.g. intel.com/sriov_netdevice)`,
  ]);
  t.same(parseNodeSelector(' ').errors.map(renderError), [`${NS}: Invalid value: " ": must hold at least one 'key=value' or 'key'`]);
  t.same(parseNodeSelector('a=b, ').errors.map(renderError), [`${NS}: Invalid value: "a=b, ": empty item in the comma-separated list`]);
  t.match(
    parseResourceNames('Intel.com/-x').warnings[0]?.reason,
    /^not an extended resource name: .*: prefix part a lowercase RFC 1123 subdomain .*; name part must consist/,
  );
  t.match(
    parseNodeSelector('Bad.com/-x').errors[0]?.reason,
    /^not a valid label key: prefix part a lowercase RFC 1123 subdomain .*; name part must consist/,
  );
  t.match(
    parseNodeSelector(`k=${'v'.repeat(63)}-`).errors[0]?.reason,
    /^not a valid value for label k: must be no more than 63 characters; a valid label must be/,
  );
});

t.test('parseClaimTemplate: one object name, trimmed', async (t) => {
  const CT = 'metadata.annotations[netattach.io/resourceClaimTemplate]';
  t.same(parseClaimTemplate(undefined), { value: undefined, errors: [] });
  t.same(parseClaimTemplate(' tmpl.a '), { value: 'tmpl.a', errors: [] });
  t.same(parseClaimTemplate(7).errors.map(renderError), [`${CT}: Invalid value: 7: must be a string`]);
  t.same(parseClaimTemplate(' ').errors.map(renderError), [
    `${CT}: Invalid value: " ": not a valid ResourceClaimTemplate name: must name a ResourceClaimTemplate`,
  ]);
  const long = parseClaimTemplate(`A${'a'.repeat(253)}`);
  t.equal(long.value, undefined);
  t.match(
    long.errors[0]?.reason,
    /^not a valid ResourceClaimTemplate name: must be no more than 253 characters; a lowercase RFC 1123 subdomain/,
  );
});
