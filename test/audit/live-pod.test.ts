// A pod object as the audit reads it (src/audit/live-pod.ts): identity, the two network
// annotations, the controller ownerReference admission reads, when two readings are judged alike
// (the background audit judges a pod again only when they differ), and finished pods.
import t from 'tap';
import {
  controllerOf,
  finished,
  identityOf,
  livePodOf,
  ownerReferencesOf,
  sameLivePod,
  sharedSizes,
  sharedText,
  withAnnotations,
} from '../../src/audit/live-pod.js';
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

const UNKEPT = { bound: 'pod', limit: 4096, chars: 5000, fingerprint: 'f1' } as const;

t.test('sameLivePod: alike only when every field the judgement reads is equal', async (t) => {
  t.ok(sameLivePod({ namespace: 'a', name: 'p', unkept: UNKEPT }, { namespace: 'a', name: 'p', unkept: { ...UNKEPT } }), 'equal unkept');
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
    ['texts not kept', { ...base, unkept: UNKEPT }],
  ];
  for (const [why, other] of differs) {
    t.notOk(sameLivePod(base, other), why);
    t.notOk(sameLivePod(other, base), `${why} (the other way)`);
  }
  // Both with texts not kept: what stands for them decides.
  const unkept: LivePod = { ...base, unkept: UNKEPT };
  for (const [why, other] of [
    ['another fingerprint', { ...unkept, unkept: { ...UNKEPT, fingerprint: 'f2' } }],
    ['another bound', { ...unkept, unkept: { ...UNKEPT, bound: 'total' } }],
  ] as Array<[string, LivePod]>) {
    t.notOk(sameLivePod(unkept, other), why);
    t.notOk(sameLivePod(other, unkept), `${why} (the other way)`);
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

t.test('withAnnotations: the same pod with other texts, and what stands for texts not kept', async (t) => {
  const pod: LivePod = { namespace: 'a', name: 'p', uid: 'u', networks: 'n', controller: VMI };
  t.strictSame(withAnnotations(pod, 'm', undefined), { namespace: 'a', name: 'p', uid: 'u', networks: 'm', controller: VMI });
  t.strictSame(withAnnotations(pod, 'm', 'd'), {
    namespace: 'a',
    name: 'p',
    uid: 'u',
    networks: 'm',
    defaultNetwork: 'd',
    controller: VMI,
  });
  const bare = withAnnotations(pod, undefined, undefined, UNKEPT);
  t.strictSame(bare, { namespace: 'a', name: 'p', uid: 'u', controller: VMI, unkept: UNKEPT });
  t.equal(bare.unkept, UNKEPT);
  t.notOk('unkept' in withAnnotations(pod, 'm', undefined), 'no unkept key without one');
  // Only the fields present: a pod without a uid has no uid key (nor one set to undefined).
  const { uid: _uid, ...noUid } = pod;
  t.strictSame(Object.keys(withAnnotations(noUid, 'm', undefined)).sort(), ['controller', 'name', 'namespace', 'networks']);
  t.strictSame(
    Object.keys(livePodOf({ metadata: { namespace: 'a', name: 'p', annotations: { 'k8s.v1.cni.cncf.io/networks': 'n' } } })!).sort(),
    ['name', 'namespace', 'networks'],
  );
  const { controller: _, ...uncontrolled } = pod;
  t.strictSame(withAnnotations(uncontrolled, 'm', undefined), { namespace: 'a', name: 'p', uid: 'u', networks: 'm' });
});

t.test('sharedText: short texts without a pod-own value are shared; 256 characters is the edge', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    ['256 characters', 'n'.repeat(256), true],
    ['257 characters', 'n'.repeat(257), false],
    ['the simple form', 'infra/net-a@eth1,net-b', true],
    ['JSON without addresses', '[{"name":"net-a","interface":"net1"}]', true],
    ['a MAC', '[{"name":"net-a","mac":"02:00:00:00:00:01"}]', false],
    ['a GUID', '[{"name":"ib","infiniband-guid":"c2:11:22:33:44:55:66:77"}]', false],
    ['IPs', '[{"name":"net-a","ips":["10.0.0.5/24"]}]', false],
    ['cni-args', '[{"name":"net-a","cni-args":{"k":"v"}}]', false],
  ];
  for (const [why, text, want] of cases) t.equal(sharedText(text), want, why);
});

t.test("livePodOf shares a short networks annotation once, and never a long one or a pod's own", async (t) => {
  const podWith = (name: string, networks: string, defaultNetwork?: string): unknown => ({
    metadata: {
      namespace: 'share',
      name,
      annotations: {
        'k8s.v1.cni.cncf.io/networks': networks,
        ...(defaultNetwork ? { 'v1.multus-cni.io/default-network': defaultNetwork } : {}),
      },
    },
  });
  const size = (): number => sharedSizes().annotations;
  const start = size();
  const text = `share-${'n'.repeat(250)}`; // 256 characters
  t.equal(livePodOf(podWith('a', text))!.networks, text);
  t.equal(size(), start + 1, 'a new short text enters once');
  t.equal(livePodOf(podWith('b', text))!.networks, text);
  t.equal(size(), start + 1, 'and is found the second time');
  t.equal(livePodOf(podWith('c', `${text}x`))!.networks, `${text}x`);
  t.equal(size(), start + 1, 'a 257-character text is kept as it is');
  const mac = '[{"name":"net-a","mac":"02:00:00:00:00:01"}]';
  t.equal(livePodOf(podWith('d', mac))!.networks, mac);
  t.equal(size(), start + 1, "a pod's own MAC is not shared");
  t.equal(livePodOf(podWith('e', 'share-x', 'share-default'))!.defaultNetwork, 'share-default');
  t.equal(size(), start + 3, 'the default-network text is shared like the networks text');
});

t.test('livePodOf shares one frozen controller per apiVersion, kind, name and uid', async (t) => {
  const podOwnedBy = (name: string, owner: Record<string, unknown>): unknown => ({
    metadata: { namespace: 'share', name, ownerReferences: [{ ...owner, controller: true }] },
  });
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1' };
  const a = livePodOf(podOwnedBy('a', rs))!.controller!;
  t.equal(livePodOf(podOwnedBy('b', { ...rs }))!.controller, a, 'the same object for an equal reference');
  t.ok(Object.isFrozen(a));
  const variants: Array<[string, Record<string, unknown>]> = [
    ['another uid', { ...rs, uid: 'u2' }],
    ['no uid', { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }],
    ['another name', { ...rs, name: 'rs2' }],
    ['another kind', { ...rs, kind: 'StatefulSet' }],
    ['another apiVersion', { ...rs, apiVersion: 'apps/v2' }],
  ];
  for (const [why, owner] of variants) {
    const c = livePodOf(podOwnedBy(why, owner))!.controller!;
    t.not(c, a, why);
    t.strictSame(c, owner, `${why}: its own fields`);
  }
  const before = sharedSizes().controllers;
  livePodOf(podOwnedBy('c', { ...rs, uid: 'u9' }));
  t.equal(sharedSizes().controllers, before + 1, 'a new reference enters the table');
});
