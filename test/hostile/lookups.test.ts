// Issue 24, finding 6 ("lookups fan out") replayed on a real `netattach serve` with the production
// heap cap, in cluster mode against the fake API server of the kube tests (test/kube/fake-apiserver.ts),
// which counts the GETs and how many run at once: with `--nads DIR` there is no GET to count.
// Its GETs answer after 20 ms, as a real API server's do at best.
//
// On main before this work, one review naming 1,000 missing NADs made 1,000 GETs, all at once, and
// the same review a moment later 1,000 more.
import t from 'tap';
import { hostileNadObject, NAMESPACE, podReview, post, startServe, validReviewAnswered, type Serve } from '../../bench/hostile-lib.js';
import { POLICIES_PATH } from '../../src/policy/index.js';
import { FakeApiServer } from '../kube/fake-apiserver.js';

// A real process started through tsx on a shared machine: more than tap's default 120 s.
t.setTimeout(300_000);

const api = new FakeApiServer();
let s: Serve;
t.before(async () => {
  api.add(hostileNadObject('sriov-a', 'intel.com/sriov_a'));
  api.setList(POLICIES_PATH, [], '1');
  api.setList('/api/v1/namespaces', [{ metadata: { name: NAMESPACE, labels: {} } }], '1');
  await api.listen();
  api.defaultGetBehaviour = { delayMs: 20 };
  s = await startServe({
    kubeconfig: api.kubeconfig('test-token'),
    extraArgs: ['--no-pod-watch', '--no-audit', '--no-dra', '--no-address-claims'],
  });
});
t.teardown(async () => {
  await s?.stop();
  await api.close();
});

const ghosts = (tag: string, n: number): string => Array.from({ length: n }, (_, i) => `ghost-${tag}-${i}`).join(',');
const lookupLines = (): string[] => s.lines.filter((l) => /NAD lookup/.test(l));
/** The Deployment's heap cap (--max-old-space-size=192), MB. */
const HEAP_CAP_MB = 192;

t.test('finding 6: one review naming 1,000 missing NADs makes at most 32 GETs, 16 at once, and one log line', async (t) => {
  const valid = await validReviewAnswered(s);
  t.ok(valid.ok, `the NAD of valid reviews comes from the cluster: ${valid.detail}`);
  const gets = api.gets;
  const lines = lookupLines().length;
  const a = await post(s, '/validate', podReview(ghosts('one', 1000)));
  t.equal(a.status, 200);
  t.equal(a.json?.response?.allowed, false, 'denied');
  t.match(a.json?.response?.status?.message, /no such NetworkAttachmentDefinition/, 'the NADs looked up are named missing');
  t.ok(api.gets - gets <= 32, `${api.gets - gets} GETs (bar 32; main made 1,000)`);
  t.ok(api.maxGetsInFlight <= 16, `at most ${api.maxGetsInFlight} GETs at once (bar 16)`);
  const logged = lookupLines().slice(lines);
  t.equal(logged.length, 1, 'one log line about the lookups');
  t.match(
    JSON.parse(logged[0] ?? '{}'),
    { notFoundCount: 32, notLookedUp: 968, msg: 'NAD lookups capped at 32 per review; the rest answered unavailable' },
    'naming the cap and the count',
  );

  const again = api.gets;
  const b = await post(s, '/validate', podReview(ghosts('one', 1000)));
  t.equal(b.json?.response?.allowed, false);
  t.equal(api.gets - again, 0, 'the same review a moment later: the absent NADs are remembered, no GET');
});

t.test('finding 6: a NAD created right after a lookup found it absent is found (the watch forgets the absence)', async (t) => {
  const absent = await post(s, '/validate', podReview('late-net'));
  t.equal(absent.json?.response?.allowed, false, 'not there yet');
  api.add(hostileNadObject('late-net', 'intel.com/sriov_a'));
  const gets = api.gets;
  let allowed = false;
  for (let i = 0; i < 100 && !allowed; i++) {
    allowed = (await post(s, '/validate', podReview('late-net'))).json?.response?.allowed === true;
    if (!allowed) await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(allowed, 'admitted once the watch brought the NAD');
  t.equal(api.gets, gets, 'found in the cache, without a GET: not by waiting out the memory of its absence');
});

t.test('finding 6: 10 senders of 1,000-missing-NAD reviews, 5 each: GETs bounded, valid reviews served, alive', async (t) => {
  const gets = api.gets;
  const lines = lookupLines().length;
  const rssBefore = s.rssMb().rss;
  api.maxGetsInFlight = 0;
  let forged = 0;
  const validAnswers: Array<Awaited<ReturnType<typeof validReviewAnswered>>> = [];
  let flooding = true;
  const sender = async (k: number): Promise<void> => {
    for (let round = 0; round < 5; round++) {
      const a = await post(s, '/validate', podReview(ghosts(`flood-${k}-${round}`, 1000)));
      if (a.status === 200 && a.json?.response?.allowed === false) forged++;
    }
  };
  const prober = async (): Promise<void> => {
    while (flooding) validAnswers.push(await validReviewAnswered(s));
  };
  const probing = prober();
  await Promise.all(Array.from({ length: 10 }, (_, k) => sender(k)));
  flooding = false;
  await probing;
  t.equal(forged, 50, 'every forged review denied with an answer');
  t.ok(api.gets - gets <= 50 * 32, `${api.gets - gets} GETs for 50 reviews (bar ${50 * 32}; main made 50,000)`);
  t.ok(api.maxGetsInFlight <= 16, `at most ${api.maxGetsInFlight} GETs at once (bar 16)`);
  t.ok(
    lookupLines().length - lines <= 50,
    `${lookupLines().length - lines} log lines about lookups (bar one per review; main: one per failed GET)`,
  );
  t.ok(
    validAnswers.length > 0 && validAnswers.every((v) => v.ok),
    `${validAnswers.length} valid reviews during the flood, all allowed with the patch (slowest ${Math.max(...validAnswers.map((v) => v.ms)).toFixed(0)} ms)`,
  );
  t.notOk(s.exited(), 'alive');
  // Cluster mode loads @kubernetes/client-node for the kubeconfig (RSS ~170 MB under tsx before
  // any request), so the bound is relative to the heap cap: RSS grew by less than it. (The heap's
  // used size is no measure here: it includes garbage V8 lets grow towards the cap.)
  const grown = s.rssMb().rss - rssBefore;
  t.ok(grown < HEAP_CAP_MB, `RSS grew ${grown.toFixed(0)} MB during the flood (< the ${HEAP_CAP_MB} MB heap cap)`);
});
