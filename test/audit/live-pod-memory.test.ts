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

t.test('replicas share one controller, one namespace and one annotation string; only identity and the annotations read are kept', async (t) => {
  const a = livePodOf(replica(1, 'infra/net-a,infra/net-b'))!;
  const b = livePodOf(replica(2, 'infra/net-a,infra/net-b'))!;
  t.same(Object.keys(a).sort(), ['controller', 'name', 'namespace', 'networks', 'uid']);
  t.equal(a.controller, b.controller, 'one controller object');
  t.ok(Object.isFrozen(a.controller), 'shared, so frozen');
  t.same(a.controller, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: 'rs-1' });
  t.equal(a.networks, 'infra/net-a,infra/net-b');
  t.not(a.name, b.name);
  const other = livePodOf(JSON.parse(JSON.stringify({ metadata: { namespace: 'team-a', name: 'x', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: 'rs-2', controller: true }] } })))!;
  t.not(other.controller, a.controller, 'another uid: another controller');
  t.equal(other.controller!.uid, 'rs-2');
});

t.test('a long annotation (a pod of its own addresses) is kept as it is, and still read right', async (t) => {
  const long = JSON.stringify(Array.from({ length: 8 }, (_, i) => ({ name: `net-${i}`, namespace: 'infra', mac: `02:00:00:00:00:0${i}` })));
  t.ok(long.length > 256);
  t.equal(livePodOf(replica(3, long))!.networks, long);
});
