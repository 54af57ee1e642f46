// What the server does with the policy wiring's pieces: findings counted once per review by
// endpoint, background tasks started without waiting and stopped on close, a shared registry,
// podsUsingNad handed to the core.
import t from 'tap';
import { Counter, Registry } from 'prom-client';
import { getHttp, podReview, request, SCRIPT } from './fixtures.js';
import { startServer } from './harness.js';

t.test('findings are counted by the server from the final decision, per endpoint', async (t) => {
  const { url, healthUrl, ca } = await startServer(t);
  const deny = () => JSON.stringify(podReview({ annotations: { [SCRIPT]: 'deny' } }));
  await request(`${url}/validate`, deny(), { ca });
  await request(`${url}/validate`, deny(), { ca });
  await request(`${url}/mutate`, deny(), { ca });
  const text = (await getHttp(`${healthUrl}/metrics`)).text;
  t.match(text, 'netattach_policy_findings_total{endpoint="validate",policy="p1",rule="allowedNetworks",action="Enforce"} 2');
  t.match(text, 'netattach_policy_findings_total{endpoint="mutate",policy="p1",rule="allowedNetworks",action="Enforce"} 1');
});

t.test('background tasks: started after listening without being awaited, stopped on close; a failing start is logged', async (t) => {
  const events: string[] = [];
  const registry = new Registry();
  const own = new Counter({ name: 'wiring_metric_total', help: 'registered by the wiring', registers: [registry] });
  own.inc();
  const { server, url, healthUrl, ca, logs } = await startServer(t, {
    deps: {
      registry,
      background: [
        {
          name: 'never syncs',
          start: () => new Promise<void>(() => events.push('hanging start')),
          stop: () => void events.push('hanging stop'),
        },
        { name: 'broken', start: () => Promise.reject(new Error('no such CRD')), stop: () => void events.push('broken stop') },
      ],
      readiness: { watch: () => 'watch has not synced yet' },
    },
  });
  const ready = await getHttp(`${healthUrl}/readyz`);
  t.equal(ready.status, 503);
  t.same(ready.json.notReady, ['watch']);
  t.equal((await request(`${url}/validate`, JSON.stringify(podReview()), { ca })).json.response.allowed, true, 'serving meanwhile');
  t.match((await getHttp(`${healthUrl}/metrics`)).text, 'wiring_metric_total 1', 'one registry for /metrics');
  t.ok(logs.lines.some((l) => l.msg === 'background task failed to start' && l.task === 'broken' && l.err === 'no such CRD'));
  await server.close();
  t.same(events.sort(), ['broken stop', 'hanging start', 'hanging stop']);
});

t.test('podsUsingNad reaches the core', async (t) => {
  let asked: string | undefined;
  const { url, ca } = await startServer(t, {
    deps: {
      core: undefined,
      podsUsingNad: (ns, name) => ((asked = `${ns}/${name}`), ['default/p1']),
    },
  });
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u-del',
      kind: { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' },
      resource: { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' },
      name: 'net-a',
      namespace: 'default',
      operation: 'DELETE',
      userInfo: { username: 'alice' },
      oldObject: { metadata: { name: 'net-a', namespace: 'default' } },
    },
  };
  const res = await request(`${url}/validate`, JSON.stringify(review), { ca });
  t.equal(asked, 'default/net-a');
  t.same(res.json.response.warnings, ['default/net-a is still used by 1 pod (default/p1); new pods naming it will fail']);
});
