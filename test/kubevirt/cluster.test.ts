// KubeVirt's binding registry from a fake API server (src/kubevirt/cluster.ts): list/watch of
// KubeVirt objects, no CRD (404) or a failing list answered as unknown, and the total bound on
// objects kept, with its answer at the bound and after the objects past it go.
import t from 'tap';
import { ClusterBindingRegistry, KUBEVIRTS_PATH } from '../../src/kubevirt/index.js';
import { FakeApiServer, until } from '../kube/fake-apiserver.js';

const kubevirt = (name: string, binding: Record<string, unknown>, rv = '1', namespace = 'kubevirt') => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'KubeVirt',
  metadata: { name, namespace, resourceVersion: rv },
  spec: { configuration: { network: { binding } } },
  status: { phase: 'Deployed' },
});
const PASST = { passt: { networkAttachmentDefinition: 'default/netbindingpasst', sidecarImage: 'x' } };

t.test('the deployed KubeVirt object gives the registry; watch updates it', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', PASST)], '5');
  const registry = new ClusterBindingRegistry(kc, { backoffMs: 10 });
  t.teardown(() => registry.stop());
  t.same(registry.registry(), { known: false, reason: 'KubeVirt objects not read yet' });
  await registry.start();
  t.equal(api.requests[0]!.headers.accept, 'application/json', 'whole objects: spec and status');
  t.same(registry.registry(), {
    known: true,
    plugins: { passt: { networkAttachmentDefinition: 'default/netbindingpasst' } },
    from: 'kubevirt/kubevirt',
  });
  await until(() => api.watching(KUBEVIRTS_PATH) === 1, 'the watch');
  api.emit(KUBEVIRTS_PATH, { type: 'MODIFIED', object: kubevirt('kubevirt', { tap: {} }, '6') });
  await until(() => {
    const r = registry.registry();
    return r.known && Object.hasOwn(r.plugins, 'tap');
  }, 'the update');
  api.emit(KUBEVIRTS_PATH, { type: 'DELETED', object: kubevirt('kubevirt', { tap: {} }, '7') });
  await until(() => !registry.registry().known, 'the delete');
  t.match(registry.registry(), { known: false, reason: /no deployed KubeVirt/ });
});

t.test('no KubeVirt CRD: unknown, not failing, said once', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const lines: string[] = [];
  const logger = {
    info: (_f: object, m: string) => void lines.push(`info ${m}`),
    warn: (_f: object, m: string) => void lines.push(`warn ${m}`),
  };
  const registry = new ClusterBindingRegistry(kc, { backoffMs: 5, logger });
  t.teardown(() => registry.stop());
  void registry.start();
  await until(() => api.lists + api.requests.length >= 3, 'a few retries');
  await until(() => registry.lastFailure()?.statusCode === 404, 'the 404');
  t.same(registry.registry(), { known: false, reason: 'KubeVirt is not installed (no kubevirts.kubevirt.io)' });
  t.same(lines, ['info no KubeVirt CRD (kubevirts.kubevirt.io): binding plugins unknown; retrying'], 'one line, whatever the retries');
  // Installed later: the watch picks it up.
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', PASST)], '9');
  await until(() => registry.registry().known, 'found once installed');
});

t.test('a failing list: unknown with the reason', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', PASST)], '5');
  api.listFailures = 1_000;
  const registry = new ClusterBindingRegistry(kc, { backoffMs: 5 });
  t.teardown(() => registry.stop());
  void registry.start();
  await until(() => registry.lastFailure() !== undefined, 'a failure');
  t.match(registry.registry(), { known: false, reason: /KubeVirt objects cannot be read/ });
  api.listFailures = 0;
  await until(() => registry.registry().known, 'known once the list works');
});

t.test('the total bound: at it the registry is read; past it unknown until the extra objects go', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const limits = { objects: 3, droppedNames: 2 };
  // Three undeployed objects and the deployed one: at the bound.
  const undeployed = (name: string, rv = '1') => ({ ...kubevirt(name, {}, rv, 'other'), status: {} });
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', PASST), undeployed('a'), undeployed('b')], '5');
  const registry = new ClusterBindingRegistry(kc, { backoffMs: 10, limits });
  t.teardown(() => registry.stop());
  await registry.start();
  t.equal(registry.registry().known, true, `${limits.objects} objects: kept, the registry known`);
  await until(() => api.watching(KUBEVIRTS_PATH) === 1, 'the watch');
  api.emit(KUBEVIRTS_PATH, { type: 'ADDED', object: undeployed('c', '6') });
  await until(() => !registry.registry().known, 'one past the bound');
  t.match(registry.registry(), { known: false, reason: /more than 3 KubeVirt objects/ });
  t.same(registry.size(), { kept: 3, dropped: 1 }, 'nothing more kept than the bound');
  api.emit(KUBEVIRTS_PATH, { type: 'DELETED', object: undeployed('c', '7') });
  await until(() => registry.registry().known, 'the object past the bound gone: known again');
  t.same(registry.size(), { kept: 3, dropped: 0 });
  // Past the names remembered too: unknown until a relist, which counts afresh.
  for (const [i, name] of ['d', 'e', 'f'].entries()) api.emit(KUBEVIRTS_PATH, { type: 'ADDED', object: undeployed(name, String(8 + i)) });
  await until(() => registry.size().dropped === 2, 'two names remembered');
  api.emit(KUBEVIRTS_PATH, { type: 'DELETED', object: undeployed('d', '11') });
  api.emit(KUBEVIRTS_PATH, { type: 'DELETED', object: undeployed('e', '12') });
  await until(() => registry.size().dropped === 0, 'the remembered ones gone');
  t.equal(registry.registry().known, false, 'one was past every bound: still unknown');
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', PASST), undeployed('a')], '20');
  api.emit(KUBEVIRTS_PATH, { type: 'ERROR', object: { kind: 'Status', code: 410 } });
  api.endWatches(KUBEVIRTS_PATH);
  await until(() => registry.registry().known, 'a relist counts afresh');
  t.same(registry.size(), { kept: 2, dropped: 0 });
});

t.test('hostile stored objects: kept within bounds, the rest of the cache unharmed', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const huge = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`p${i}`, { networkAttachmentDefinition: `n${i}` }]));
  api.setList(KUBEVIRTS_PATH, [kubevirt('kubevirt', huge), { kind: 'KubeVirt', metadata: {} }, null, 'x'], '5');
  const registry = new ClusterBindingRegistry(kc, { backoffMs: 10 });
  t.teardown(() => registry.stop());
  await registry.start();
  t.match(registry.registry(), { known: false, reason: /kubevirt\/kubevirt: more than 64 binding plugins/ });
  t.same(registry.size(), { kept: 1, dropped: 0 }, 'one summary, no plugin of it');
});
