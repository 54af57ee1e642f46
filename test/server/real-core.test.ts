// The server with the real admission core (the default when none is injected) and NADs from
// the NAD model: the whole pipeline over HTTPS.
import t from 'tap';
import { StaticNadSource } from '../../src/nads/index.js';
import { podReview, request, NETWORKS } from './fixtures.js';
import { startServer } from './harness.js';

const nadObject = {
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name: 'sriov-a', namespace: 'default', annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' } },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'sriov-a', type: 'sriov', capabilities: { mac: true, ips: true } }) },
};

t.test('mutate injects the NAD resource; a missing NAD is denied with a field error', async (t) => {
  const { url, ca, logs } = await startServer(t, { deps: { core: undefined, nadSource: new StaticNadSource([nadObject]) } });
  const ok = await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'sriov-a' } })), { ca });
  t.equal(ok.status, 200);
  t.equal(ok.json.response.allowed, true, JSON.stringify(ok.json.response.status));
  t.equal(ok.json.response.patchType, 'JSONPatch');
  const patch = JSON.parse(Buffer.from(ok.json.response.patch, 'base64').toString()) as Array<{ path: string; value: unknown }>;
  t.match(JSON.stringify(patch), /intel\.com\/sriov_a/);

  const validate = await request(`${url}/validate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'sriov-a' } })), { ca });
  t.equal(validate.json.response.allowed, true);
  t.notOk('patch' in validate.json.response);

  const missing = podReview({ annotations: { [NETWORKS]: 'nope' } });
  const denied = await request(`${url}/validate`, JSON.stringify(missing), { ca });
  t.equal(denied.status, 200);
  t.equal(denied.json.response.uid, missing.request!.uid);
  t.equal(denied.json.response.allowed, false);
  t.match(denied.json.response.status.message, /metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]/);
  t.ok(logs.lines.some((l) => l.msg === 'denied' && l.uid === missing.request!.uid));
});
