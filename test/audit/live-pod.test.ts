// A pod object as the audit reads it (src/audit/live-pod.ts): identity, the two network
// annotations, the controller ownerReference admission reads, when two readings are judged alike
// (the background audit judges a pod again only when they differ), and finished pods.
import t from 'tap';
import { controllerOf, finished, identityOf, livePodOf, ownerReferencesOf, sameLivePod } from '../../src/audit/live-pod.js';
import type { LivePod } from '../../src/audit/types.js';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT = 'v1.multus-cni.io/default-network';
const VMI = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-uid' };

t.test('identityOf: namespace, name and uid; a default namespace; nothing without a name or namespace', async (t) => {
  const metadata = { namespace: 'a', name: 'p', uid: 'u' };
  t.strictSame(identityOf({ metadata }), { namespace: 'a', name: 'p', uid: 'u', metadata });
  t.strictSame(
    identityOf({ metadata: { namespace: 'a', name: 'p' } }),
    { namespace: 'a', name: 'p', metadata: { namespace: 'a', name: 'p' } },
    'no uid key without a uid',
  );
  t.strictSame(
    identityOf({ metadata: { namespace: 'a', name: 'p', uid: '' } }),
    { namespace: 'a', name: 'p', metadata: { namespace: 'a', name: 'p', uid: '' } },
    'an empty uid is none',
  );
  t.strictSame(
    identityOf({ metadata: { name: 'p' } }, 'default'),
    { namespace: 'default', name: 'p', metadata: { name: 'p' } },
    'the default namespace',
  );
  t.strictSame(identityOf({ metadata: { namespace: 'a', name: 'p' } }, 'default')?.namespace, 'a', 'its own namespace wins');
  t.strictSame(identityOf({ metadata: { namespace: '', name: 'p' } }, 'd')?.namespace, 'd', 'an empty namespace is none');
  const none: Array<[string, unknown, string | undefined]> = [
    ['no name', { metadata: { namespace: 'a' } }, 'd'],
    ['an empty name', { metadata: { namespace: 'a', name: '' } }, 'd'],
    ['a name that is no string', { metadata: { namespace: 'a', name: 7 } }, 'd'],
    ['no namespace and no default', { metadata: { name: 'p' } }, undefined],
    ['a namespace that is no string', { metadata: { namespace: ['a'], name: 'p' } }, undefined],
    ['no metadata', {}, 'd'],
    ['metadata that is no object', { metadata: 'x' }, 'd'],
    ['metadata that is an array', { metadata: [{ name: 'p' }] }, 'd'],
    ['null', null, 'd'],
    ['an array', [{ metadata: { name: 'p' } }], 'd'],
    ['a string', 'pod', 'd'],
  ];
  for (const [why, obj, ns] of none) t.equal(identityOf(obj, ns), undefined, why);
});

t.test('livePodOf: identity, the network annotations as strings, the controller', async (t) => {
  t.strictSame(
    livePodOf({
      metadata: {
        namespace: 'a',
        name: 'p',
        uid: 'u',
        annotations: { [NETWORKS]: 'net1', [DEFAULT]: 'calico', other: 'x' },
        ownerReferences: [{ ...VMI, controller: true }],
      },
    }),
    { namespace: 'a', name: 'p', uid: 'u', networks: 'net1', defaultNetwork: 'calico', controller: VMI },
  );
  t.strictSame(livePodOf({ metadata: { namespace: 'a', name: 'p' } }), { namespace: 'a', name: 'p' }, 'nothing else: no keys');
  t.strictSame(
    livePodOf({ metadata: { namespace: 'a', name: 'p', annotations: { [NETWORKS]: '', [DEFAULT]: '' } } }),
    { namespace: 'a', name: 'p', networks: '', defaultNetwork: '' },
    'empty annotations are kept (admission judges them)',
  );
  t.strictSame(
    livePodOf({ metadata: { namespace: 'a', name: 'p', annotations: { [NETWORKS]: 5, [DEFAULT]: ['x'] } } }),
    { namespace: 'a', name: 'p' },
    'annotations that are no strings are none',
  );
  t.strictSame(
    livePodOf({ metadata: { namespace: 'a', name: 'p', annotations: 'x' } }),
    { namespace: 'a', name: 'p' },
    'annotations that are no object',
  );
  t.strictSame(
    livePodOf({ metadata: { namespace: 'a', name: 'p', annotations: [NETWORKS] } }),
    { namespace: 'a', name: 'p' },
    'annotations that are an array',
  );
  t.strictSame(
    livePodOf({ metadata: { name: 'p', annotations: { [DEFAULT]: 'd' } } }, 'files'),
    { namespace: 'files', name: 'p', defaultNetwork: 'd' },
    'the default namespace',
  );
  t.equal(livePodOf({ metadata: { namespace: 'a' } }), undefined);
});

t.test('controllerOf: the first ownerReference marked controller, when well formed', async (t) => {
  const cases: Array<[string, unknown, unknown]> = [
    ['a VMI', [{ ...VMI, controller: true }], VMI],
    ['no uid', [{ apiVersion: 'v1', kind: 'K', name: 'n', controller: true }], { apiVersion: 'v1', kind: 'K', name: 'n' }],
    ['an empty uid', [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: '', controller: true }], { apiVersion: 'v1', kind: 'K', name: 'n' }],
    [
      'a uid that is no string',
      [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: 5, controller: true }],
      { apiVersion: 'v1', kind: 'K', name: 'n' },
    ],
    [
      'the controller after another owner',
      [
        { ...VMI, name: 'other' },
        { ...VMI, controller: true },
      ],
      VMI,
    ],
    [
      'the first controller',
      [
        { ...VMI, controller: true },
        { ...VMI, name: 'second', controller: true },
      ],
      VMI,
    ],
    ['controller "true" is not true', [{ ...VMI, controller: 'true' }], undefined],
    ['no controller', [{ ...VMI, controller: false }], undefined],
    ['no references', [], undefined],
    ['references that are no array', { 0: { ...VMI, controller: true } }, undefined],
    ['a reference that is no object', ['x', null, [{ ...VMI, controller: true }]], undefined],
    [
      'a malformed controller stops the search',
      [
        { kind: 'K', name: 'n', controller: true },
        { ...VMI, controller: true },
      ],
      undefined,
    ],
    ['no kind', [{ apiVersion: 'v1', name: 'n', controller: true }], undefined],
    ['no name', [{ apiVersion: 'v1', kind: 'K', controller: true }], undefined],
    ['an empty name', [{ apiVersion: 'v1', kind: 'K', name: '', controller: true }], undefined],
    ['a name that is no string', [{ apiVersion: 'v1', kind: 'K', name: 1, controller: true }], undefined],
  ];
  for (const [why, refs, want] of cases) t.strictSame(controllerOf({ ownerReferences: refs }), want, why);
  t.equal(controllerOf({}), undefined, 'no ownerReferences');
  t.strictSame(
    controllerOf({ ownerReferences: [{ apiVersion: '', kind: '', name: 'n', controller: true }] }),
    { apiVersion: '', kind: '', name: 'n' },
    'empty apiVersion and kind are strings (admission judges them)',
  );
});

t.test('ownerReferencesOf: the controller as admission reads it, or none', async (t) => {
  t.strictSame(ownerReferencesOf({ namespace: 'a', name: 'p', controller: VMI }), [{ ...VMI, controller: true }]);
  t.equal(ownerReferencesOf({ namespace: 'a', name: 'p' }), undefined);
});

t.test('sameLivePod: alike only when every field the judgement reads is equal', async (t) => {
  const base: LivePod = { namespace: 'a', name: 'p', uid: 'u', networks: 'n', defaultNetwork: 'd', controller: VMI };
  t.ok(sameLivePod(base, { ...base, controller: { ...VMI } }), 'equal copies');
  t.ok(sameLivePod({ namespace: 'a', name: 'p' }, { namespace: 'a', name: 'p' }), 'both bare');
  const differs: Array<[string, LivePod]> = [
    ['uid', { ...base, uid: 'v' }],
    ['no uid', { ...base, uid: undefined as never }],
    ['networks', { ...base, networks: 'm' }],
    ['default network', { ...base, defaultNetwork: 'e' }],
    ['controller apiVersion', { ...base, controller: { ...VMI, apiVersion: 'kubevirt.io/v2' } }],
    ['controller kind', { ...base, controller: { ...VMI, kind: 'Pod' } }],
    ['controller name', { ...base, controller: { ...VMI, name: 'vm2' } }],
    ['controller uid', { ...base, controller: { ...VMI, uid: 'other' } }],
    ['no controller', { ...base, controller: undefined as never }],
  ];
  for (const [why, other] of differs) {
    t.notOk(sameLivePod(base, other), why);
    t.notOk(sameLivePod(other, base), `${why} (the other way)`);
  }
});

t.test('finished: Succeeded and Failed pods only', async (t) => {
  const cases: Array<[unknown, boolean]> = [
    [{ status: { phase: 'Succeeded' } }, true],
    [{ status: { phase: 'Failed' } }, true],
    [{ status: { phase: 'Running' } }, false],
    [{ status: { phase: 'Pending' } }, false],
    [{ status: {} }, false],
    [{ status: 'Succeeded' }, false],
    [{ status: ['Succeeded'] }, false],
    [{}, false],
    [null, false],
    ['Failed', false],
  ];
  for (const [obj, want] of cases) t.equal(finished(obj), want, JSON.stringify(obj));
});
