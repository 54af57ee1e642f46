// The pure part of `npm run bench:scale` (test/e2e/bench/scale-model.ts): the generators are
// deterministic and spread as documented, the planted collisions are real collisions, and the
// cluster they describe is one serve's pipeline admits (no false denial) except the collisions.
import t from 'tap';
import pino from 'pino';
import * as core from '../../src/admission/index.js';
import { StaticNadSource } from '../../src/nads/index.js';
import { AddressIndex, loadPolicyDocuments, NAME_LABEL, PolicyEngine, policySet } from '../../src/policy/index.js';
import { indexPod } from '../../src/policy/pod-source.js';
import { createMetrics, handleReview } from '../../src/server/index.js';
import {
  admissionReview,
  cpuPerCallUs,
  DEFAULT_SIZES,
  dupTarget,
  emptyTally,
  expectedIpsFindings,
  hash32,
  kibPerPod,
  nadObject,
  nadRef,
  nadsIn,
  NETWORKS,
  peaks,
  percentile,
  podNamespaces,
  podObject,
  podPlan,
  policies,
  reviewPlan,
  SCALE_LABEL,
  sampleAt,
  sizesFromEnv,
  table,
  tally,
  verdictsRight,
  type ScaleSizes,
} from '../e2e/bench/scale-model.js';

const small: ScaleSizes = { namespaces: 12, nads: 40, pods: 600, dupPairs: 3, collide: 0.1, seed: 7 };

t.test('sizes: defaults, the environment, refusals naming the variable', async (t) => {
  t.same(sizesFromEnv({}), DEFAULT_SIZES);
  t.same(sizesFromEnv({ SCALE_PODS: '150000', SCALE_NADS: '10000', SCALE_NAMESPACES: '2000', SCALE_COLLIDE: '0.25' }), {
    ...DEFAULT_SIZES,
    pods: 150000,
    nads: 10000,
    namespaces: 2000,
    collide: 0.25,
  });
  t.throws(() => sizesFromEnv({ SCALE_PODS: '5k' }), /SCALE_PODS: invalid value "5k"/);
  t.throws(() => sizesFromEnv({ SCALE_NAMESPACES: '0' }), /SCALE_NAMESPACES: .*at least 1/);
  t.throws(() => sizesFromEnv({ SCALE_COLLIDE: '1.5' }), /SCALE_COLLIDE: invalid value "1.5"/);
  t.throws(() => sizesFromEnv({ SCALE_PODS: '100', SCALE_DUP_PAIRS: '10' }), /SCALE_DUP_PAIRS: 10 pairs need at least 200 pods/);
});

t.test('generators are deterministic in (seed, index) and depend on the seed', async (t) => {
  t.equal(hash32(1, 2, 3), hash32(1, 2, 3));
  t.not(hash32(1, 2, 3), hash32(2, 2, 3));
  t.same(podPlan(small, 17), podPlan(small, 17));
  t.same(nadObject(small, 5), nadObject(small, 5));
  t.same(reviewPlan(small, 99), reviewPlan(small, 99));
  const other = { ...small, seed: 8 };
  const differ = Array.from({ length: 50 }, (_, i) => JSON.stringify(podPlan(small, i)) !== JSON.stringify(podPlan(other, i))).filter(
    Boolean,
  ).length;
  t.ok(differ > 10, `another seed gives other pods (${differ} of 50 differ)`);
});

t.test('the mix: NAD kinds, 30 % with an address, pods only on NADs of their namespace', async (t) => {
  const s: ScaleSizes = { ...small, namespaces: 50, nads: 400, pods: 20_000 };
  const kinds = { sriov: 0, macvlan: 0, 'ib-sriov': 0 };
  for (let j = 0; j < s.nads; j++) kinds[nadRef(s, j).kind]++;
  t.ok(kinds.sriov > 120 && kinds.macvlan > 120 && kinds['ib-sriov'] > 50, JSON.stringify(kinds));
  let withAddress = 0;
  let twoNets = 0;
  let ips = 0;
  let foreign = 0;
  const addresses = new Set<string>();
  for (let i = 0; i < s.pods; i++) {
    const p = podPlan(s, i);
    for (const n of p.networks) if (n.nad.namespace !== p.namespace) foreign++;
    if (p.networks.length === 2) twoNets++;
    if (p.address) {
      withAddress++;
      addresses.add(p.address.value);
    }
    if (p.ips) ips++;
  }
  t.equal(foreign, 0, "every network is in the pod's namespace");
  t.ok(Math.abs(withAddress / s.pods - 0.3) < 0.02, `${withAddress} pods with an address`);
  t.equal(addresses.size, withAddress, 'every address is unique among the live pods');
  t.ok(twoNets > s.pods * 0.15 && twoNets < s.pods * 0.25, `${twoNets} pods with two networks`);
  t.ok(ips > 0, `${ips} pods ask for ips`);
  let nadTotal = 0;
  for (let k = 0; k < s.namespaces; k++) nadTotal += nadsIn(s, k);
  t.equal(nadTotal, s.nads);
  t.equal(podNamespaces({ ...s, namespaces: 10, nads: 4 }), 4, 'a namespace without a NAD holds no pod');
});

t.test('collisions: twins and colliding reviews copy a live pod with an address', async (t) => {
  const targets = new Set<number>();
  for (let d = 0; d < small.dupPairs; d++) {
    const i = dupTarget(small, d);
    t.ok(i < small.pods && podPlan(small, i).address, `twin ${d} copies pod ${i}, which has an address`);
    targets.add(i);
  }
  t.equal(targets.size, small.dupPairs, 'distinct twins');
  let collide = 0;
  const fresh = new Set<string>();
  for (let k = 0; k < 2000; k++) {
    const r = reviewPlan(small, k);
    if (r.collides) {
      collide++;
      const live = podPlan(small, r.of!);
      t.same(r.pod.address, live.address) || t.bailout();
      t.equal(r.pod.namespace, live.namespace);
      t.not(r.pod.name, live.name);
    } else if (r.pod.address) {
      t.notOk(fresh.has(r.pod.address.value)) || t.bailout();
      fresh.add(r.pod.address.value);
    }
  }
  t.ok(Math.abs(collide / 2000 - 0.1) < 0.025, `${collide} of 2000 collide`);
  t.equal(reviewPlan({ ...small, collide: 0 }, 3).collides, false);
});

t.test("serve's pipeline admits the generated cluster and denies exactly the collisions", async (t) => {
  const nads = Array.from({ length: small.nads }, (_, j) => nadObject(small, j));
  const loaded = loadPolicyDocuments(
    policies()
      .map((p) => JSON.stringify(p))
      .join('\n---\n'),
    'scale',
  );
  t.same(loaded.errors, [], 'the four policies load');
  t.equal(loaded.policies.length, 4);
  const index = new AddressIndex();
  const nadSource = new StaticNadSource(nads);
  const deps = {
    core,
    nadSource,
    policy: new PolicyEngine({ policies: policySet(loaded.policies), index }),
    reservations: index,
    config: core.DEFAULT_ADMISSION_CONFIG,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(() => nadSource),
    namespaceLabels: (ns: string) => ({ [NAME_LABEL]: ns, [SCALE_LABEL]: 'true' }),
  };
  // The live pods as the pod watch indexes them.
  for (let i = 0; i < small.pods; i++) {
    const o = podObject(podPlan(small, i)) as { metadata: Record<string, unknown> };
    indexPod(index, { metadata: { ...o.metadata, uid: `uid-${i}` } } as never);
  }
  const tl = emptyTally();
  for (let k = 0; k < 300; k++) {
    const r = reviewPlan(small, k);
    const review = admissionReview(podObject(r.pod), `u-${k}`);
    const m = await handleReview(review, 'mutate', 1000, deps as never);
    if (m.status !== 200) throw new Error(m.error);
    const mr = m.review.response!;
    if (!mr.allowed) {
      tally(tl, r, true, mr.status?.message);
      continue;
    }
    const v = await handleReview(review, 'validate', 1000, deps as never);
    if (v.status !== 200) throw new Error(v.error);
    const vr = v.review.response!;
    tally(tl, r, !vr.allowed, vr.status?.message);
    if (!vr.allowed) t.match(vr.status?.message ?? '', /scale-unique/, 'denied by the uniqueness policy');
  }
  t.same(tl.wrong, [], 'no wrong verdict');
  t.ok(tl.collisions > 10 && tl.fresh > 200, `${tl.collisions} collisions, ${tl.fresh} fresh`);
  t.ok(verdictsRight(tl));
  t.ok(expectedIpsFindings(small) > 0, 'the Audit rule has pods to report');
  const ann = (podObject(podPlan(small, 0)) as { metadata: { annotations: Record<string, string> } }).metadata.annotations[NETWORKS]!;
  t.ok(Array.isArray(JSON.parse(ann)), 'the networks annotation is JSON');
});

t.test('report math', async (t) => {
  t.equal(percentile([5, 1, 4, 2, 3], 50), 3);
  t.equal(percentile([5, 1, 4, 2, 3], 99), 5);
  t.ok(Number.isNaN(percentile([], 50)));
  const samples = [
    { t: 0, rssMb: 50 },
    { t: 250, rssMb: 90, heapUsedMb: 40 },
    { t: 500, rssMb: 70, heapUsedMb: 60 },
    { t: 750, rssMb: 80, heapUsedMb: 30 },
  ];
  t.equal(sampleAt(samples, 600)?.rssMb, 70);
  t.equal(sampleAt(samples, -1), undefined);
  t.same(peaks(samples, 400), { rssMb: 90, heapUsedMb: 40 });
  t.same(peaks(samples), { rssMb: 90, heapUsedMb: 60 });
  t.equal(cpuPerCallUs(0.5, 1000), 500);
  t.ok(Number.isNaN(cpuPerCallUs(1, 0)));
  t.equal(kibPerPod(100, 0, 150, 51_200), 1);
  const tl = emptyTally();
  tally(tl, { k: 0, pod: podPlan(small, 1, 'x'), collides: true, of: 1 }, false);
  t.notOk(verdictsRight(tl), 'an admitted collision is a wrong verdict');
  t.match(tl.wrong[0], /twin of pod-1\) was admitted/);
  t.equal(
    table(
      ['a', 'b'],
      [
        ['x', 1234.5],
        ['y', NaN],
      ],
    ),
    '| a | b |\n|---|---|\n| x | 1235 |\n| y | – |',
  );
});
