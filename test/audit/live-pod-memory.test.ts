// What the background audit keeps per live pod: the replicas of one workload share their
// namespace, controller reference and (short) networks annotation, each parsed from its own JSON
// like the watch parses them; nothing else of the object is held.
import t from 'tap';
import { livePodOf } from '../../src/audit/index.js';

const replica = (n: number, networks: string): unknown =>
  JSON.parse(
    JSON.stringify({
      metadata: {
        namespace: 'team-a',
        name: `web-7d9f8c6b5-${n}`,
        uid: `uid-${n}`,
        labels: { app: 'web' },
        annotations: { 'k8s.v1.cni.cncf.io/networks': networks, other: 'x'.repeat(100) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: 'rs-1', controller: true }],
        managedFields: [{ manager: 'kube-controller-manager' }],
      },
    }),
  );

t.test(
  'replicas share one controller, one namespace and one annotation string; only identity and the annotations read are kept',
  async (t) => {
    const a = livePodOf(replica(1, 'infra/net-a,infra/net-b'))!;
    const b = livePodOf(replica(2, 'infra/net-a,infra/net-b'))!;
    t.same(Object.keys(a).sort(), ['controller', 'name', 'namespace', 'networks', 'uid']);
    t.equal(a.controller, b.controller, 'one controller object');
    t.ok(Object.isFrozen(a.controller), 'shared, so frozen');
    t.same(a.controller, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: 'rs-1' });
    t.equal(a.networks, 'infra/net-a,infra/net-b');
    t.not(a.name, b.name);
    const other = livePodOf(
      JSON.parse(
        JSON.stringify({
          metadata: {
            namespace: 'team-a',
            name: 'x',
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: 'rs-2', controller: true }],
          },
        }),
      ),
    )!;
    t.not(other.controller, a.controller, 'another uid: another controller');
    t.equal(other.controller!.uid, 'rs-2');
  },
);

t.test('a long annotation (a pod of its own addresses) is kept as it is, and still read right', async (t) => {
  const long = JSON.stringify(Array.from({ length: 8 }, (_, i) => ({ name: `net-${i}`, namespace: 'infra', mac: `02:00:00:00:00:0${i}` })));
  t.ok(long.length > 256);
  t.equal(livePodOf(replica(3, long))!.networks, long);
});

t.test(
  "the shared controllers and annotations stay bounded while ReplicaSets churn; annotations with a pod's own addresses are not shared",
  async (t) => {
    const { sharedSizes } = await import('../../src/audit/live-pod.js');
    const podOf = (n: number, networks: string): unknown => ({
      metadata: {
        namespace: 'churn',
        name: `p-${n}`,
        annotations: { 'k8s.v1.cni.cncf.io/networks': networks },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${n}`, uid: `rs-uid-${n}`, controller: true }],
      },
    });
    for (let n = 0; n < 50_000; n++) livePodOf(podOf(n, `net-${n}`));
    const at = sharedSizes();
    t.ok(at.controllers <= 20_000 && at.annotations <= 20_000, `at most 20,000 each after 50,000 distinct (${JSON.stringify(at)})`);
    t.ok(at.controllers >= 10_000, 'and still sharing the recent ones');
    const before = sharedSizes().annotations;
    const a = livePodOf(podOf(1, '[{"name":"n","mac":"02:00:00:00:00:01"}]'))!;
    const b = livePodOf(podOf(1, '[{"name":"n","mac":"02:00:00:00:00:01"}]'))!;
    t.equal(a.networks, b.networks, 'the same text either way');
    t.equal(sharedSizes().annotations, before, 'a MAC selection does not enter the shared table');
    const c = livePodOf(podOf(2, 'net-shared'))!;
    const d = livePodOf(podOf(3, 'net-shared'))!;
    t.equal(c.networks, d.networks);
  },
);
