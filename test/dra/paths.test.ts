// Which way a network's device is served, table-driven.
import t from 'tap';
import { devicePathOf, StaticDraView, byScheduler } from '../../src/dra/index.js';
import { nadFromObject } from '../../src/nads/index.js';

const nad = (annotations: Record<string, string>) =>
  nadFromObject({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'n', namespace: 'ns', annotations },
    spec: { config: '' },
  });
const RN = 'k8s.v1.cni.cncf.io/resourceName';
const TPL = 'netattach.io/resourceClaimTemplate';

t.test('paths', async (t) => {
  const view = new StaticDraView(
    [
      { name: 'a', extendedResourceName: 'example.com/dra', creationTimestamp: '2026-01-01T00:00:00Z' },
      { name: 'b', extendedResourceName: 'example.com/shared', creationTimestamp: '2026-01-01T00:00:00Z' },
      { name: 'c', extendedResourceName: 'example.com/shared', creationTimestamp: '2026-03-01T00:00:00Z' },
    ],
    [{ namespace: 'x', name: 'tpl' }],
  );
  const cases: Array<[string, Record<string, string>, string, RegExp, RegExp[]]> = [
    ['no device', {}, 'none', /no device/, []],
    ['device plugin', { [RN]: 'intel.com/sriov' }, 'device-plugin', /intel\.com\/sriov via a device plugin/, []],
    ['DRA extended resource', { [RN]: 'example.com/dra' }, 'dra-extended-resource', /example\.com\/dra via DeviceClass a \(DRA\)/, []],
    ['mixed', { [RN]: 'example.com/dra, intel.com/sriov' }, 'mixed', /via DeviceClass a .* via a device plugin/, []],
    [
      'ambiguous',
      { [RN]: 'example.com/shared' },
      'dra-extended-resource',
      /via DeviceClass c/,
      [/DeviceClasses c, b share extendedResourceName example\.com\/shared; the scheduler picks c/],
    ],
    [
      'explicit claims',
      { [RN]: 'example.com/dra', [TPL]: 'tpl' },
      'claim-template',
      /ResourceClaimTemplate tpl in the pod's namespace \(present in x\)/,
      [],
    ],
    [
      'explicit claims, template nowhere, no resourceName',
      { [TPL]: 'gone' },
      'claim-template',
      /ResourceClaimTemplate gone/,
      [/no resourceName/, /no namespace has ResourceClaimTemplate gone yet/],
    ],
    // Not an extended resource name, yet what Multus finds the claimed device by: no "no resourceName".
    [
      'explicit claims with a DRA-only resourceName',
      { [RN]: 'single-gpu', [TPL]: 'tpl' },
      'claim-template',
      /ResourceClaimTemplate tpl/,
      [],
    ],
    [
      'a DRA-only resourceName alone',
      { [RN]: 'single-gpu' },
      'none',
      /no extended resource; single-gpu only from a DRA claim of the pod/,
      [],
    ],
    [
      'two DRA-only resourceNames',
      { [RN]: 'single-gpu,other-gpu' },
      'none',
      /no extended resource; single-gpu, other-gpu only from a DRA claim of the pod/,
      [],
    ],
  ];
  for (const [name, annotations, path, summary, problems] of cases) {
    const got = devicePathOf(nad(annotations), view);
    t.equal(got.path, path, name);
    t.match(got.summary, summary, name);
    t.equal(got.problems.length, problems.length, `${name}: ${got.problems.join(' | ')}`);
    problems.forEach((p, i) => t.match(got.problems[i], p, name));
  }
  t.same(
    devicePathOf(nad({ [TPL]: 'gone', [RN]: 'x.io/y' }), { classesFor: () => [], templateNamespaces: () => undefined }).problems,
    [],
    'templates unknown: no claim about them',
  );
});

t.test('the scheduler order: created last first, then the name', async (t) => {
  const list = [
    { name: 'b', creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'z', creationTimestamp: '2026-05-01T00:00:00Z' },
  ].sort(byScheduler);
  t.same(
    list.map((c) => c.name),
    ['z', 'a', 'b'],
  );
});

t.test('the NAD annotation: parsed into the model, invalid values named', async (t) => {
  t.equal(nad({ [TPL]: ' net-a ' }).claimTemplate, 'net-a');
  const bad = nad({ [TPL]: 'Net_A' });
  t.equal(bad.claimTemplate, undefined);
  t.match(
    bad.problems.join('\n'),
    /netattach\.io\/resourceClaimTemplate\]: Invalid value: "Net_A": not a valid ResourceClaimTemplate name/,
  );
});

// Issue 30 (mutation part `dra-view`): the whole answer, word for word, and the scheduler's
// comparison at each of its branches.
t.test('devicePathOf: exact summaries and problems', async (t) => {
  const view = new StaticDraView(
    [
      { name: 'a', extendedResourceName: 'example.com/dra' },
      { name: 'b', extendedResourceName: 'example.com/shared', creationTimestamp: '2026-01-01T00:00:00Z' },
      { name: 'c', extendedResourceName: 'example.com/shared', creationTimestamp: '2026-03-01T00:00:00Z' },
    ],
    [
      { namespace: 'y', name: 'tpl' },
      { namespace: 'x', name: 'tpl' },
    ],
  );
  const cases: Array<[string, Record<string, string>, string, string, string[]]> = [
    ['none', {}, 'none', 'no device (no resourceName)', []],
    ['device plugin', { [RN]: 'intel.com/a' }, 'device-plugin', 'extended resources: intel.com/a via a device plugin', []],
    [
      'two DRA',
      { [RN]: 'example.com/dra, example.com/shared' },
      'dra-extended-resource',
      'extended resources: example.com/dra via DeviceClass a (DRA), example.com/shared via DeviceClass c (DRA)',
      ['DeviceClasses c, b share extendedResourceName example.com/shared; the scheduler picks c'],
    ],
    [
      'mixed',
      { [RN]: 'intel.com/a, example.com/dra' },
      'mixed',
      'extended resources: intel.com/a via a device plugin, example.com/dra via DeviceClass a (DRA)',
      [],
    ],
    [
      'claims, present',
      { [TPL]: 'tpl', [RN]: 'intel.com/a' },
      'claim-template',
      "explicit DRA claims from ResourceClaimTemplate tpl in the pod's namespace (present in x, y)",
      [],
    ],
    [
      'claims, nowhere',
      { [TPL]: 'gone', [RN]: 'intel.com/a' },
      'claim-template',
      "explicit DRA claims from ResourceClaimTemplate gone in the pod's namespace",
      ['no namespace has ResourceClaimTemplate gone yet: pods using this network will be denied'],
    ],
    [
      'claims, no resourceName',
      { [TPL]: 'tpl' },
      'claim-template',
      "explicit DRA claims from ResourceClaimTemplate tpl in the pod's namespace (present in x, y)",
      ['no resourceName: Multus finds the claimed device by k8s.v1.cni.cncf.io/resourceName'],
    ],
  ];
  for (const [name, annotations, path, summary, problems] of cases) {
    const got = devicePathOf(nad(annotations), view);
    t.equal(got.path, path, name);
    t.equal(got.summary, summary, name);
    t.strictSame(got.problems, problems, name);
  }
  const got = devicePathOf(nad({ [RN]: 'example.com/shared, intel.com/a' }), view);
  t.strictSame(
    got.resources.map((r) => [r.name, r.classes.map((c) => c.name)]),
    [
      ['example.com/shared', ['c', 'b']],
      ['intel.com/a', []],
    ],
  );
  const noNamespaces = devicePathOf(nad({ [TPL]: 'tpl', [RN]: 'x.io/y' }), { classesFor: () => [] });
  t.equal(
    noNamespaces.summary,
    "explicit DRA claims from ResourceClaimTemplate tpl in the pod's namespace",
    'a view without templateNamespaces',
  );
  t.strictSame(noNamespaces.problems, []);
});

t.test('byScheduler at each branch', async (t) => {
  const c = (name: string, creationTimestamp?: string) => ({ name, ...(creationTimestamp ? { creationTimestamp } : {}) });
  t.equal(byScheduler(c('a', '2026-01-01T00:00:00Z'), c('b', '2026-02-01T00:00:00Z')), 1, 'created earlier: after');
  t.equal(byScheduler(c('b', '2026-02-01T00:00:00Z'), c('a', '2026-01-01T00:00:00Z')), -1, 'created later: first');
  t.equal(byScheduler(c('a'), c('b', '2026-01-01T00:00:00Z')), 1, 'no creation time: after any');
  t.equal(byScheduler(c('b', '2026-01-01T00:00:00Z'), c('a')), -1);
  t.equal(byScheduler(c('a', '2026-01-01T00:00:00Z'), c('b', '2026-01-01T00:00:00Z')), -1, 'same time: name first');
  t.equal(byScheduler(c('b', '2026-01-01T00:00:00Z'), c('a', '2026-01-01T00:00:00Z')), 1);
  t.equal(byScheduler(c('a'), c('a')), 0, 'the same class');
});
