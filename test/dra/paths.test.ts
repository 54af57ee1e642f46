// Which way a network's device is served, table-driven.
import t from 'tap';
import { devicePathOf, StaticDraView, byScheduler } from '../../src/dra/index.js';
import { nadFromObject } from '../../src/nads/index.js';

const nad = (annotations: Record<string, string>) =>
  nadFromObject({ apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: 'n', namespace: 'ns', annotations }, spec: { config: '' } });
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
    ['ambiguous', { [RN]: 'example.com/shared' }, 'dra-extended-resource', /via DeviceClass c/, [/DeviceClasses c, b share extendedResourceName example\.com\/shared; the scheduler picks c/]],
    ['explicit claims', { [RN]: 'example.com/dra', [TPL]: 'tpl' }, 'claim-template', /ResourceClaimTemplate tpl in the pod's namespace \(present in x\)/, []],
    ['explicit claims, template nowhere, no resourceName', { [TPL]: 'gone' }, 'claim-template', /ResourceClaimTemplate gone/, [/no resourceName/, /no namespace has ResourceClaimTemplate gone yet/]],
  ];
  for (const [name, annotations, path, summary, problems] of cases) {
    const got = devicePathOf(nad(annotations), view);
    t.equal(got.path, path, name);
    t.match(got.summary, summary, name);
    t.equal(got.problems.length, problems.length, `${name}: ${got.problems.join(' | ')}`);
    problems.forEach((p, i) => t.match(got.problems[i], p, name));
  }
  t.same(devicePathOf(nad({ [TPL]: 'gone', [RN]: 'x.io/y' }), { classesFor: () => [], templateNamespaces: () => undefined }).problems, [], 'templates unknown: no claim about them');
});

t.test('the scheduler order: created last first, then the name', async (t) => {
  const list = [
    { name: 'b', creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'z', creationTimestamp: '2026-05-01T00:00:00Z' },
  ].sort(byScheduler);
  t.same(list.map((c) => c.name), ['z', 'a', 'b']);
});

t.test('the NAD annotation: parsed into the model, invalid values named', async (t) => {
  t.equal(nad({ [TPL]: ' net-a ' }).claimTemplate, 'net-a');
  const bad = nad({ [TPL]: 'Net_A' });
  t.equal(bad.claimTemplate, undefined);
  t.match(bad.problems.join('\n'), /netattach\.io\/resourceClaimTemplate\]: Invalid value: "Net_A": not a valid ResourceClaimTemplate name/);
});
