// The pipeline and ResourceClaimTemplates: a template the cache lacks is read (GET) before the
// review, so a template created a moment before its pod is found; pods without explicit-claim
// networks never wait for it.
import t from 'tap';
import { StaticNadSource } from '../../src/nads/index.js';
import { StaticDraView, TEMPLATE_LIMITS, type TemplateLookup } from '../../src/dra/index.js';
import type { DraSource } from '../../src/server/index.js';
import { podReview, request, NETWORKS } from './fixtures.js';
import { startServer } from './harness.js';

const nadObject = (name: string, annotations: Record<string, string>) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name, namespace: 'default', annotations },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name, type: 'sriov' }) },
});
const nads = new StaticNadSource([
  nadObject('claimed', { 'k8s.v1.cni.cncf.io/resourceName': 'example.com/nic', 'netattach.io/resourceClaimTemplate': 'nic' }),
  nadObject('plugin', { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' }),
]);

function draSource(lookup: (ns: string, name: string) => Promise<TemplateLookup>): DraSource & { asked: string[] } {
  const cache = new StaticDraView();
  const asked: string[] = [];
  return {
    asked,
    classesFor: (r) => cache.classesFor(r),
    template: (ns, name) => cache.template(ns, name),
    lookup: (ns, name) => {
      asked.push(`${ns}/${name}`);
      return lookup(ns, name);
    },
  };
}

const patchOf = (json: { response: { patch?: string } }): string => Buffer.from(json.response.patch ?? '', 'base64').toString();

t.test('a template missing from the cache is read before the review', async (t) => {
  const dra = draSource(async () => ({ status: 'found' }));
  const { url, ca } = await startServer(t, { deps: { core: undefined, nadSource: nads, dra } });
  const ok = await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'claimed' } })), { ca });
  t.equal(ok.json.response.allowed, true, JSON.stringify(ok.json.response.status));
  t.same(dra.asked, ['default/nic']);
  t.match(patchOf(ok.json), /"resourceClaimTemplateName":"nic"/);
  t.same(ok.json.response.warnings ?? [], []);

  await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'plugin' } })), { ca });
  t.same(dra.asked, ['default/nic'], 'a pod without explicit-claim networks reads nothing');
});

t.test('absent: denied naming the template; unreadable: admitted with a warning', async (t) => {
  let answer: TemplateLookup = { status: 'not-found' };
  const dra = draSource(async () => answer);
  const { url, ca } = await startServer(t, { deps: { core: undefined, nadSource: nads, dra } });
  const denied = await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'claimed' } })), { ca });
  t.equal(denied.json.response.allowed, false);
  t.equal(denied.json.response.status.code, 403);
  t.match(denied.json.response.status.message, /ResourceClaimTemplate nic, which namespace default lacks/);

  answer = { status: 'unavailable', reason: 'the API server did not answer within 50 ms' };
  const warned = await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'claimed' } })), { ca });
  t.equal(warned.json.response.allowed, true);
  t.match(
    warned.json.response.warnings.join('\n'),
    /ResourceClaimTemplate default\/nic unchecked: the API server did not answer within 50 ms/,
  );

  const thrown = draSource(async () => {
    throw new Error('boom');
  });
  const second = await startServer(t, { deps: { core: undefined, nadSource: nads, dra: thrown } });
  const still = await request(`${second.url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'claimed' } })), {
    ca: second.ca,
  });
  t.equal(still.json.response.allowed, true, 'a failing lookup is not a denial');
  t.match(still.json.response.warnings.join('\n'), /unchecked: boom/);
});

t.test('a review naming more templates than the per-review bound looks up only the bound (issue 37)', async (t) => {
  const many = new StaticNadSource(
    Array.from({ length: 40 }, (_, i) =>
      nadObject(`c${i}`, { 'k8s.v1.cni.cncf.io/resourceName': 'example.com/nic', 'netattach.io/resourceClaimTemplate': `t${i}` }),
    ),
  );
  const dra = draSource(async () => ({ status: 'found' }));
  const { url, ca } = await startServer(t, { deps: { core: undefined, nadSource: many, dra } });
  const names = Array.from({ length: 40 }, (_, i) => `c${i}`).join(',');
  const answer = await request(`${url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: names } })), { ca });
  t.equal(dra.asked.length, TEMPLATE_LIMITS.perReview, `${TEMPLATE_LIMITS.perReview} GETs, not 40`);
  // The rest are unavailable (a warning: the pod is not denied for what could not be read).
  t.equal(answer.json.response.allowed, true);
  t.match(answer.json.response.warnings.join('\n'), /more than 32 ResourceClaimTemplates to look up in one review/);
});

// Issue 38, item 1: the pod of Multus's DRA how-to (its own spec.resourceClaims, no netattach
// annotation) through the whole server: /mutate adds no extended resource for the network its
// claim serves; when it cannot tell it injects as before and says so, naming the opt-out.
t.test("Multus's DRA how-to pod: its own claim serves the network, no extended resource injected", async (t) => {
  const vf = 'intel.com/sriov_vf';
  const view = new StaticDraView(
    [{ name: 'sriov-vf', resourceNames: [vf] }, { name: 'sriovnetwork.k8snetworkplumbingwg.io' }],
    [
      {
        namespace: 'default',
        name: 'sriov-template',
        devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriov-vf' }] }] },
      },
      {
        namespace: 'default',
        name: 'driver-only',
        devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriovnetwork.k8snetworkplumbingwg.io' }] }] },
      },
    ],
  );
  const multus = new StaticNadSource([nadObject('sriov-net', { 'k8s.v1.cni.cncf.io/resourceName': vf })]);
  const { url, ca } = await startServer(t, { deps: { core: undefined, nadSource: multus, dra: view } });
  const withClaim = (claim: Record<string, string> | undefined): string => {
    const r = podReview({ annotations: { [NETWORKS]: 'sriov-net' } });
    const spec = (r.request!.object as { spec: { containers: Array<Record<string, unknown>>; resourceClaims?: unknown[] } }).spec;
    if (claim) {
      spec.resourceClaims = [claim];
      spec.containers[0]!['resources'] = { claims: [{ name: claim['name'] }] };
    }
    return JSON.stringify(r);
  };
  const cases: Array<{ name: string; claim?: Record<string, string>; injected: boolean; warning?: RegExp }> = [
    { name: 'a class selecting the attribute', claim: { name: 'sriov', resourceClaimTemplateName: 'sriov-template' }, injected: false },
    {
      name: 'a class selecting by driver alone',
      claim: { name: 'sriov', resourceClaimTemplateName: 'driver-only' },
      injected: true,
      warning:
        /^default\/sriov-net: intel\.com\/sriov_vf added; pod claim sriov may hold its device instead \(no request of ResourceClaimTemplate driver-only names a DeviceClass known to select it\): if so, annotate netattach\.io\/networkClaims: sriov-net=sriov/,
    },
    {
      name: 'a ResourceClaim by name',
      claim: { name: 'shared', resourceClaimName: 'vf' },
      injected: true,
      warning: /pod claim shared may hold its device instead \(netattach does not read ResourceClaims\)/,
    },
    { name: 'no claim', injected: true },
  ];
  for (const c of cases) {
    const answer = await request(`${url}/mutate`, withClaim(c.claim), { ca });
    t.equal(answer.json.response.allowed, true, `${c.name}: ${JSON.stringify(answer.json.response.status)}`);
    t.equal(
      patchOf(answer.json).includes('intel.com~1sriov_vf') || patchOf(answer.json).includes('"intel.com/sriov_vf"'),
      c.injected,
      `${c.name}: injected ${c.injected}`,
    );
    const warnings: string[] = answer.json.response.warnings ?? [];
    if (c.warning) t.match(warnings.join('\n'), c.warning, c.name);
    else t.same(warnings, [], `${c.name}: no warning`);
  }
});
