// PodDraft (src/admission/draft.ts): copy-on-write access to a pod for the mutators.
import t from 'tap';
import { PodDraft } from '../../src/admission/draft.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('spec(): one copy per draft, undefined without a spec object', async (t) => {
  const original: Obj = { spec: { containers: [{ name: 'a' }], nodeName: 'n' } };
  const d = new PodDraft(original);
  t.equal(d.changed, false);
  const s = d.spec()!;
  t.equal(d.spec(), s, 'the second call returns the same copy');
  t.equal(d.pod['spec'], s);
  t.not(s, original['spec']);
  t.not(s['containers'], original['spec'].containers, 'containers array copied');
  t.equal(d.changed, true);

  for (const [name, pod] of [
    ['no spec', {}],
    ['spec null', { spec: null }],
    ['spec a string', { spec: 'x' }],
  ] as const) {
    const e = new PodDraft(pod as Obj);
    t.equal(e.spec(), undefined, name);
    t.equal(e.changed, false, `${name}: not changed`);
    t.same(e.pod, pod, `${name}: pod untouched`);
  }
});

t.test('spec(): a spec without a containers array is copied as it is', async (t) => {
  for (const spec of [{}, { containers: 'ab' }, { containers: { a: 1 } }] as Obj[]) {
    const d = new PodDraft({ spec });
    t.strictSame(d.spec(), spec);
  }
});

t.test('container(i): one copy per container, error when there is none', async (t) => {
  const original: Obj = { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }, 'x'] } };
  const d = new PodDraft(original);
  const c: Obj = d.container(0);
  t.equal(d.container(0), c, 'the second call returns the same copy');
  c['resources'].requests['x'] = '1';
  t.strictSame(original['spec'].containers[0], { name: 'a', resources: { requests: { cpu: '1' } } }, 'original untouched');
  t.equal((d.pod as Obj)['spec'].containers[0], c);

  const cases: Array<[string, Obj, number]> = [
    ['index past the end', original, 5],
    ['not an object', original, 1],
    ['no spec', {}, 0],
    ['no containers', { spec: {} }, 0],
  ];
  for (const [name, pod, i] of cases) {
    t.throws(() => new PodDraft(pod).container(i), { name: 'Error', message: `no container ${i} to write` }, name);
  }
});
