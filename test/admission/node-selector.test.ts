// The NADs' nodeSelector merged into the pod's spec.nodeSelector (src/admission/node-selector.ts):
// keys the pod lacks are added; a key set to another value (by the pod or another NAD) is denied,
// naming both values; nothing is written when nothing is added.
import t from 'tap';
import { PodDraft } from '../../src/admission/draft.js';
import { mergeNodeSelector } from '../../src/admission/node-selector.js';
import type { ParsedNetwork } from '../../src/annotation/types.js';
import type { Nad } from '../../src/nads/types.js';

type Obj = Record<string, unknown>;
const NET = (i: number): string => `metadata.annotations[k8s.v1.cni.cncf.io/networks][${i}]`;

function attachment(i: number, name: string, nodeSelector: Record<string, string>): { net: ParsedNetwork; nad: Nad } {
  const net = { index: i, path: NET(i), selection: { name, namespace: 'ns' } } as unknown as ParsedNetwork;
  const nad: Nad = { namespace: 'ns', name, resourceNames: [], nodeSelector, problems: [] };
  return { net, nad };
}

function run(pod: Obj, ...selectors: Array<Record<string, string>>) {
  const draft = new PodDraft(pod);
  const errors = mergeNodeSelector(
    draft,
    selectors.map((s, i) => attachment(i, `net${i}`, s)),
  );
  return { errors, draft, spec: draft.pod['spec'] as Obj | undefined };
}

t.test('keys the pod lacks are added; the rest of the selector is kept', async (t) => {
  const table: Array<[string, unknown, Array<Record<string, string>>, unknown]> = [
    ['no selector', undefined, [{ zone: 'a' }], { zone: 'a' }],
    ['null selector', null, [{ zone: 'a' }], { zone: 'a' }],
    ['other keys kept', { disk: 'ssd' }, [{ zone: 'a' }], { disk: 'ssd', zone: 'a' }],
    ['partly present', { zone: 'a' }, [{ zone: 'a', rack: '1' }], { zone: 'a', rack: '1' }],
    ['two NADs agreeing', undefined, [{ zone: 'a' }, { zone: 'a', rack: '2' }], { zone: 'a', rack: '2' }],
  ];
  for (const [name, selector, nads, want] of table) {
    const spec: Obj = { containers: [] };
    if (selector !== undefined) spec['nodeSelector'] = selector;
    const r = run({ spec }, ...nads);
    t.same(r.errors, [], `${name}: no errors`);
    t.equal(r.draft.changed, true, `${name}: written`);
    t.same(r.spec?.['nodeSelector'], want, `${name}: merged`);
  }
});

t.test('nothing to add: the draft is untouched', async (t) => {
  const table: Array<[string, Obj, Array<Record<string, string>>]> = [
    ['no attachments', { spec: { nodeSelector: 'junk' } }, []],
    ['NADs without a selector, junk selector', { spec: { nodeSelector: 'junk' } }, [{}, {}]],
    ['NADs without a selector, no spec', {}, [{}]],
    ['every key already set alike', { spec: { nodeSelector: { zone: 'a', rack: '1' } } }, [{ zone: 'a' }, { rack: '1' }]],
  ];
  for (const [name, pod, nads] of table) {
    const r = run(pod, ...nads);
    t.same(r.errors, [], `${name}: no errors`);
    t.equal(r.draft.changed, false, `${name}: not written`);
  }
});

t.test('a pod without a spec object is left to the resource injection to report', async (t) => {
  for (const pod of [{}, { spec: 'junk' }, { spec: null }] as Obj[]) {
    const r = run(pod, { zone: 'a' });
    t.same(r.errors, [], JSON.stringify(pod));
    t.equal(r.draft.changed, false, `${JSON.stringify(pod)}: not written`);
  }
});

t.test('a selector that is not a map is invalid, and nothing is merged', async (t) => {
  for (const selector of ['zone=a', 3, ['zone']]) {
    const r = run({ spec: { nodeSelector: selector } }, { zone: 'a' });
    t.same(
      r.errors,
      [{ path: 'spec.nodeSelector', type: 'Invalid value', value: selector, reason: 'must be a map of label to value' }],
      JSON.stringify(selector),
    );
    t.equal(r.draft.changed, false, `${JSON.stringify(selector)}: not written`);
  }
});

t.test('conflicts are denied naming both values', async (t) => {
  const pod = run({ spec: { nodeSelector: { zone: 'b' } } }, { zone: 'a', rack: '1' });
  t.same(pod.errors, [
    {
      path: 'spec.nodeSelector[zone]',
      type: 'Invalid value',
      value: 'b',
      reason: 'conflicts with zone=a required by NetworkAttachmentDefinition ns/net0',
    },
  ]);
  t.same(pod.spec?.['nodeSelector'], { zone: 'b', rack: '1' }, 'the conflicting key is not overwritten');

  const nads = run({ spec: {} }, { zone: 'a' }, { zone: 'b' });
  t.same(nads.errors, [
    { path: NET(1), type: 'Invalid value', value: 'ns/net1', reason: 'its nodeSelector zone=b conflicts with zone=a of ns/net0' },
  ]);
  t.same(nads.spec?.['nodeSelector'], { zone: 'a' }, 'the first NAD wins the merge');
});
