// The AdmissionReviews in examples/reviews are what the README tells a new user to send to
// `npm start`: their verdicts against examples/nads are pinned here so the README stays true.
import t from 'tap';
import { readFileSync } from 'node:fs';
import fastJsonPatch, { type Operation } from 'fast-json-patch';

const { applyPatch } = fastJsonPatch;
import { decodeReview, plan, review, toResponse, DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { DirectoryNadSource } from '../../src/nads/index.js';
import { NO_POLICY } from '../../src/policy/types.js';

const file = (name: string): string => new URL(`../../examples/${name}`, import.meta.url).pathname;

async function mutate(name: string) {
  const nads = new DirectoryNadSource(file('nads/'), { resyncIntervalMs: 0 });
  await nads.start();
  t.teardown(() => nads.stop());
  const decoded = decodeReview(JSON.parse(readFileSync(file(`reviews/${name}`), 'utf8')));
  if (!decoded.ok) throw new Error(decoded.error);
  const request = decoded.review.request!;
  const lookups = new Map<string, Awaited<ReturnType<typeof nads.lookup>>>();
  for (const ref of plan(request, DEFAULT_ADMISSION_CONFIG).nadRefs)
    lookups.set(`${ref.namespace}/${ref.name}`, await nads.lookup(ref.namespace, ref.name));
  const decision = review(request, {
    endpoint: 'mutate',
    nads: (ns, n) => lookups.get(`${ns}/${n}`) ?? { status: 'not-found' },
    policy: NO_POLICY,
    config: DEFAULT_ADMISSION_CONFIG,
  });
  return { request, response: toResponse(decoded.review.apiVersion, request.uid, decision, 'mutate').response! };
}

t.test('pod-sriov.json: allowed, two SR-IOV resources and the NAD nodeSelector', async (t) => {
  const { request, response } = await mutate('pod-sriov.json');
  t.equal(response.allowed, true);
  t.equal(response.patchType, 'JSONPatch');
  const patch = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8')) as Operation[];
  const pod = applyPatch(structuredClone(request.object), patch).newDocument as {
    spec: {
      containers: Array<{ resources: { requests: Record<string, string>; limits: Record<string, string> } }>;
      nodeSelector: Record<string, string>;
    };
  };
  const want = { 'intel.com/sriov_netdevice': '1', 'intel.com/intel_sriov_dpdk': '1' };
  t.same(pod.spec.containers[0]!.resources, { requests: want, limits: want });
  t.same(pod.spec.nodeSelector, { 'feature.node.kubernetes.io/network-sriov.capable': 'true', dpdk: '' });
});

t.test('pod-bad-mac.json: denied with every problem, each with its field path', async (t) => {
  const { response } = await mutate('pod-bad-mac.json');
  t.equal(response.allowed, false);
  t.equal(response.status?.code, 403);
  const lines = response.status!.message!.split('\n');
  t.equal(lines[0], '3 errors:');
  const ann = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  t.match(lines[1], `- ${ann}[0].mac: Invalid value: "02:00:00:aa:bb": must be a 6-byte Ethernet MAC`);
  t.match(lines[2], `- ${ann}[1].infiniband-guid: Invalid value: "00:00:00:00:00:00:00:00": the all-zero GUID`);
  t.match(lines[3], `- ${ann}[2]: Not found: "default/missing-net"`);
  t.equal(response.patch, undefined);
});
