// The address Leases on the request path: two servers (replicas) with their own index and policy
// engine, sharing one Lease API, over HTTPS with the real admission core.
import t, { type Test } from 'tap';
import { StaticNadSource } from '../../src/nads/index.js';
import { AddressIndex, AddressLeaseStore, PolicyEngine, policySet } from '../../src/policy/index.js';
import { podReview, request, NETWORKS } from './fixtures.js';
import { startServer } from './harness.js';
import { policies, policyYaml } from '../policy/helpers.js';
import { FakeLeases } from '../policy/fake-leases.js';

const MAC = '02:00:00:00:00:01';
const nadObject = {
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name: 'sriov-a', namespace: 'default', annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' } },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'sriov-a', type: 'sriov', capabilities: { mac: true } }) },
};

async function replica(t: Test, fake: FakeLeases, action = 'Enforce', enforcement: 'enforce' | 'observe' = 'enforce') {
  const index = new AddressIndex();
  const policy = new PolicyEngine({
    index,
    policies: policySet(policies(policyYaml('u', `rules:\n  uniqueAddresses: {mac: Network, action: ${action}}`))),
  });
  const addressLeases = new AddressLeaseStore({
    api: fake.api(),
    transport: fake.transport(),
    live: (h) => index.hasPod(h.namespace, h.name),
    livenessCurrent: () => true,
    timeoutMs: 500,
    backoffMs: 5,
  });
  t.teardown(() => addressLeases.stop());
  const running = await startServer(t, {
    options: { enforcement },
    deps: { core: undefined, nadSource: new StaticNadSource([nadObject]), policy, reservations: index, addressLeases },
  });
  return { ...running, index, addressLeases };
}

function review(name: string, mac = MAC, dryRun = false) {
  const r = podReview({ annotations: { [NETWORKS]: JSON.stringify([{ name: 'sriov-a', mac }]) }, dryRun });
  r.request!.name = name;
  const md = (r.request!.object as { metadata: Record<string, unknown> }).metadata;
  md.name = name;
  md.uid = `uid-${name}`;
  return JSON.stringify(r);
}

t.test("a second replica loses the claim: denied with the index's message, its reservation released", async (t) => {
  const fake = new FakeLeases();
  const a = await replica(t, fake);
  const b = await replica(t, fake);
  const won = await request(`${a.url}/validate`, review('p1'), { ca: a.ca });
  t.equal(won.json.response.allowed, true, JSON.stringify(won.json.response.status));
  t.equal(fake.objects.size, 1, 'claimed');
  const lost = await request(`${b.url}/validate`, review('p2'), { ca: b.ca });
  t.equal(lost.json.response.allowed, false);
  t.equal(lost.json.response.status.code, 403);
  t.match(
    lost.json.response.status.message,
    `policy "u" (uniqueAddresses): MAC ${MAC} is already used by pod default/p1 (being created) on network default/sriov-a (scope Network)`,
  );
  t.equal(b.index.stats().reservations, 0, 'the loser holds nothing locally');
  t.ok(b.logs.lines.some((l) => l.msg === 'denied' && Array.isArray(l.rules) && (l.rules as string[]).includes('uniqueAddresses')));
  t.equal(fake.objects.size, 1);
});

t.test('observe mode: a claim lost to another replica admits the pod with the reason as a warning', async (t) => {
  // Recipe: drop the observe branch in arbitrate() (src/server/pipeline.ts): the pod is denied.
  const fake = new FakeLeases();
  const a = await replica(t, fake, 'Enforce', 'observe');
  const b = await replica(t, fake, 'Enforce', 'observe');
  t.equal((await request(`${a.url}/validate`, review('p1'), { ca: a.ca })).json.response.allowed, true);
  const lost = await request(`${b.url}/validate`, review('p2'), { ca: b.ca });
  t.equal(lost.json.response.allowed, true, 'nothing is denied in observe mode');
  t.ok(
    (lost.json.response.warnings as string[]).some((w) => w.includes('uniqueAddresses')),
    JSON.stringify(lost.json.response.warnings),
  );
});

t.test('the mutating call judges the index only; dry run never writes', async (t) => {
  const fake = new FakeLeases();
  const a = await replica(t, fake);
  t.equal((await request(`${a.url}/mutate`, review('p1'), { ca: a.ca })).json.response.allowed, true);
  t.equal(fake.calls.create, 0, 'no claim from /mutate');
  t.equal((await request(`${a.url}/validate`, review('p1', MAC, true), { ca: a.ca })).json.response.allowed, true);
  t.equal(fake.calls.create + fake.calls.delete, 0, 'no claim from a dry run');
});

t.test('API server unreachable: Enforce denies that create with a retryable 503; Warn admits, logged', async (t) => {
  const fake = new FakeLeases();
  const enforce = await replica(t, fake);
  const warn = await replica(t, fake, 'Warn');
  fake.down = true;
  const denied = await request(`${enforce.url}/validate`, review('p1'), { ca: enforce.ca });
  t.equal(denied.json.response.allowed, false);
  t.equal(denied.json.response.status.code, 503);
  t.equal(denied.json.response.status.reason, 'ServiceUnavailable');
  t.match(denied.json.response.status.message, /MAC 02:00:00:00:00:01 could not be claimed in the API server \(.*ECONNREFUSED.*\); retry/);
  t.equal(enforce.index.stats().reservations, 0, 'the denied create holds nothing locally');
  t.ok(enforce.logs.lines.some((l) => l.msg === 'address claim could not be made; denied with 503 (retryable)'));
  const other = await request(`${enforce.url}/validate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'sriov-a' } })), {
    ca: enforce.ca,
  });
  t.equal(other.json.response.allowed, true, 'a pod without a unique address is not affected');

  const admitted = await request(`${warn.url}/validate`, review('p2'), { ca: warn.ca });
  t.equal(admitted.json.response.allowed, true);
  // kubectl shows warnings cut to a line; the whole text is in the decision's finding, logged.
  t.match(admitted.json.response.warnings, [
    /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.mac: .*policy "u" \(uniqueAddresses\): MAC 02:00:00:/,
  ]);
  t.ok(warn.logs.lines.some((l) => l.msg === 'address claim could not be made; admitted'));
});

t.test('crossed reservations (mutate on one replica, validate on the other) cannot deny both racers', async (t) => {
  const fake = new FakeLeases();
  const a = await replica(t, fake);
  const b = await replica(t, fake);
  t.equal((await request(`${a.url}/mutate`, review('p0'), { ca: a.ca })).json.response.allowed, true);
  t.equal((await request(`${b.url}/mutate`, review('p1'), { ca: b.ca })).json.response.allowed, true);
  t.equal(
    (await request(`${a.url}/mutate`, review('p2'), { ca: a.ca })).json.response.allowed,
    false,
    'the mutating call still denies on a local reservation (fast path)',
  );
  const [v0, v1] = await Promise.all([
    request(`${b.url}/validate`, review('p0'), { ca: b.ca }),
    request(`${a.url}/validate`, review('p1'), { ca: a.ca }),
  ]);
  t.equal([v0, v1].filter((v) => v.json.response.allowed).length, 1, 'exactly one admitted: the claim decides, not the reservations');
  t.equal(fake.objects.size, 1);
});
