// Issue 37, finding 3 replayed on a real `netattach serve` in cluster mode with the production heap
// cap and the background audit on: 700 pods with a valid ~250 KB networks annotation (one
// selection padded with JSON whitespace) arrive through the pod watch (events, not the list),
// beside 20 whose ~250 KB is a value (nothing to strip) and ordinary pods, some failing.
//
// Before the fix the audit kept every pod's annotation text as it came (up to 256 KiB a pod,
// never shared past 256 characters): about 700 such pods ran the heap out.
import t from 'tap';
import { hostileNadObject, metricValues, NAMESPACE, startServe, sleep, validReviewAnswered, type Serve } from '../../bench/hostile-lib.js';
import { POLICIES_PATH } from '../../src/policy/index.js';
import { FakeApiServer } from '../kube/fake-apiserver.js';

t.setTimeout(600_000);

/** The Deployment's memory limit (320Mi), MiB. */
const CONTAINER_LIMIT_MB = 320;
/** The Deployment's heap cap (--max-old-space-size=192), MiB. */
const HEAP_CAP_MB = 192;
const PODS = '/api/v1/pods';
const PADDED = 700;
const UNCOMPACTABLE = 20;
const ORDINARY = 40;
const FAILING = 10;
const PAD = 250_000;

const api = new FakeApiServer();
let s: Serve;
let uid = 0;
const podEvent = (name: string, networks: string): string =>
  JSON.stringify({
    type: 'ADDED',
    object: {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: {
        namespace: NAMESPACE,
        name,
        uid: `uid-${++uid}`,
        resourceVersion: String(1000 + uid),
        annotations: { 'k8s.v1.cni.cncf.io/networks': networks },
      },
    },
  });

t.before(async () => {
  api.add(hostileNadObject('sriov-a', 'intel.com/sriov_a'));
  api.setList(POLICIES_PATH, [], '1');
  api.setList('/api/v1/namespaces', [{ metadata: { name: NAMESPACE, labels: { 'kubernetes.io/metadata.name': NAMESPACE } } }], '1');
  api.setList(PODS, [], '1');
  await api.listen();
  s = await startServe({ kubeconfig: api.kubeconfig('test-token'), extraArgs: ['--no-dra', '--no-address-claims'], readyWithinMs: 60_000 });
});
t.teardown(async () => {
  await s?.stop();
  await api.close();
});

/** One event to the pod watches, then a short pause (a burst of creates, not one write of 175 MB). */
const send = async (line: string): Promise<void> => {
  api.emit(PODS, JSON.parse(line));
  await sleep(2);
};

t.test(
  'finding 3: 700 pods with a 250 KB networks annotation through the pod watch: alive, under the limit, reviews answered, the audit reports',
  async (t) => {
    for (let i = 0; i < 200 && api.watching(PODS) === 0; i++) await sleep(100);
    t.ok(api.watching(PODS) > 0, 'serve watches the pods');
    const padded = `[{"name":"sriov-a"${' '.repeat(PAD)}}]`;
    const uncompactable = `[{"name":"sriov-a","cni-args":{"note":"${'x'.repeat(PAD)}"}}]`;
    const valid: Array<Awaited<ReturnType<typeof validReviewAnswered>>> = [];
    const before = s.rssMb().rss;
    const timeline: number[] = [];
    const sampler = setInterval(() => timeline.push(Math.round(s.rssMb().rss)), 1000);
    for (let i = 0; i < ORDINARY; i++) await send(podEvent(`ordinary-${i}`, i < FAILING ? `missing-${i}` : 'sriov-a'));
    for (let i = 0; i < PADDED + UNCOMPACTABLE; i++) {
      await send(podEvent(`big-${i}`, i < PADDED ? padded : uncompactable));
      if (i % 100 === 99) valid.push(await validReviewAnswered(s));
      if (s.exited()) break;
    }
    // The audit judges at 1,000 pods a second: wait for it to have seen and judged them all.
    const want = ORDINARY + PADDED + UNCOMPACTABLE;
    let m = new Map<string, number>();
    for (let i = 0; i < 600 && !s.exited(); i++) {
      m = await metricValues(s).catch(() => new Map<string, number>());
      if (m.get('netattach_audit_pods{state="audited"}') === want && m.get('netattach_audit_pods{state="pending"}') === 0) break;
      await sleep(200);
    }
    valid.push(await validReviewAnswered(s));
    clearInterval(sampler);
    t.comment(`RSS before the pods ${before.toFixed(0)} MiB, each second: ${timeline.join(' ')}`);
    t.notOk(s.exited(), `alive (${/.*(?:FATAL|heap).*/i.exec(s.stderr())?.[0] ?? s.stderr().slice(-300)})`);
    const peak = s.rssMb().peak;
    t.ok(peak < CONTAINER_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MiB < the ${CONTAINER_LIMIT_MB} MiB container limit`);
    // Under tsx with client-node loaded serve starts near 300 MiB, so the growth is bound too: the
    // pods' 180 MB of text went, all but what the audit keeps (a quarter of the heap cap at most).
    const grown = Math.max(...timeline, peak) - before;
    t.ok(grown < HEAP_CAP_MB / 4, `RSS grew ${grown.toFixed(0)} MiB over the pods (< a quarter of the ${HEAP_CAP_MB} MiB heap cap)`);
    t.ok(
      valid.length > 0 && valid.every((v) => v.ok),
      `${valid.length} valid reviews answered alongside, all allowed with the patch (${valid.find((v) => !v.ok)?.detail ?? ''})`,
    );
    t.equal(m.get('netattach_audit_pods{state="audited"}'), want, 'every pod known to the audit');
    t.equal(m.get('netattach_audit_pods{state="pending"}'), 0, 'and judged');
    const finding = (rule: string): number =>
      [...m].filter(([k]) => k.startsWith('netattach_audit_findings{') && k.includes(`rule="${rule}"`)).reduce((n, [, v]) => n + v, 0);
    t.equal(finding('networkExists'), FAILING, 'the failing ordinary pods are reported');
    t.equal(finding('notJudged'), UNCOMPACTABLE, 'the pods whose text is not kept are reported as not judged, never as clean');
    t.equal(m.get('netattach_audit_pods{state="not-kept"}'), UNCOMPACTABLE, 'and counted');
  },
);
