// Issue 15's findings replayed on a real `netattach serve` with the production heap cap
// (bench/hostile-lib.ts). Each asserts: the process is alive, memory bounded, time bounded and a
// valid review sent alongside answered correctly. Time is bounded as a ratio to a reference the
// same server answers in the same run (a shared machine's load moves both); `node
// dist/bench/main.js hostile` measures the real figures (README).
import t, { type Test } from 'tap';
import {
  STRONG_TLS12_SUITES,
  WEAK_TLS12_SUITES,
  bigBodies,
  flatBody,
  handshake,
  longestLine,
  manyPlugins,
  nadReview,
  nestedBody,
  post,
  podReview,
  quadraticAnnotation,
  serverCpuMs,
  startServe,
  validReviewAnswered,
  type Serve,
} from '../../bench/hostile-lib.js';

// A real process and megabytes of traffic on a shared machine: more than tap's default 120 s.
t.setTimeout(300_000);
let s: Serve;
t.before(async () => {
  s = await startServe();
});
t.teardown(() => s?.stop());

const alive = async (t: Test, what: string) => {
  t.notOk(s.exited(), `${what}: the process is alive`);
  const valid = await validReviewAnswered(s);
  t.ok(valid.ok, `${what}: a valid review is answered correctly (${valid.detail}, ${valid.ms.toFixed(0)} ms)`);
  const { rss } = s.rssMb();
  t.ok(rss < 250, `${what}: RSS ${rss.toFixed(0)} MB < 250 MB`);
};

t.test('finding 7: TLS 1.2 refuses the weak suites Node offered by default, keeps ECDHE+AEAD and TLS 1.3', async (t) => {
  for (const cipher of WEAK_TLS12_SUITES)
    t.notOk(await handshake(s, { maxVersion: 'TLSv1.2', ciphers: `${cipher}@SECLEVEL=0` }), `${cipher} refused`);
  for (const cipher of STRONG_TLS12_SUITES) t.ok(await handshake(s, { maxVersion: 'TLSv1.2', ciphers: cipher }), `${cipher} accepted`);
  t.ok(await handshake(s, { minVersion: 'TLSv1.3' }), 'TLS 1.3 accepted');
});

t.test('finding 2: three 4 MB nested bodies at once are refused quickly, without a crash', async (t) => {
  // The reference, measured here: three valid reviews of the same size (a 4 MB label value) at
  // once, each read, parsed and answered. A refusal before parsing costs less than that (measured
  // 0.4-0.6x); V8's parse of the nested body took 0.6-1.3 s each, and the process then died.
  const padded = JSON.parse(podReview('sriov-a')) as { request: { object: { metadata: { labels?: Record<string, string> } } } };
  padded.request.object.metadata.labels = { pad: 'x'.repeat(4_000_000) };
  const reference = await bigBodies(s, 3, JSON.stringify(padded));
  const referenceMs = Math.max(...reference.answers.map((a) => a.ms));
  for (const a of reference.answers) t.equal(a.status, 200, 'the reference reviews are answered');
  const body = nestedBody();
  const r = await bigBodies(s, 3, body);
  for (const a of r.answers) {
    t.equal(a.status, 400, a.error ?? JSON.stringify(a.json)?.slice(0, 200));
    t.match(a.json, { code: 'NETATTACH_BODY_SHAPE' });
    t.ok(
      a.ms < 2 * referenceMs,
      `refused in ${a.ms.toFixed(0)} ms; valid bodies of that size answered in ${referenceMs.toFixed(0)} ms (bar 2x)`,
    );
  }
  t.ok(r.valid.ok, `valid review alongside: ${r.valid.detail} in ${r.valid.ms.toFixed(0)} ms`);
  await alive(t, 'after the nested bodies');
});

t.test('finding 2: eight flat 4 MB bodies of empty arrays at once are refused without a crash', async (t) => {
  const r = await bigBodies(s, 8, flatBody());
  for (const a of r.answers) t.match(a, { status: 400, json: { code: 'NETATTACH_BODY_SHAPE' } });
  t.ok(r.valid.ok, `valid review alongside: ${r.valid.detail}`);
  await alive(t, 'after the flat bodies');
});

t.test('finding 4: the quadratic annotation is answered quickly, and valid reviews alongside are not held up', async (t) => {
  // Warm the JSON form's code paths (the schema is compiled on first use), as any running replica has.
  await post(s, '/mutate', podReview('[{"name":"sriov-a"}]'));
  // Server CPU, not wall time (on a shared machine wall time is mostly waiting for a core), and as a
  // ratio to a reference measured here: the same 999 elements and 41,000 numbers written `1`, which
  // Go reads, so no notes. /proc counts CPU in 10 ms ticks: three pairs each, to rise above them.
  const cpuOfPairs = async (n: string) => {
    const cpu = serverCpuMs(s);
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await Promise.all([post(s, '/mutate', podReview(quadraticAnnotation(n))), validReviewAnswered(s)]));
    return { used: serverCpuMs(s) - cpu, answers };
  };
  const reference = await cpuOfPairs('1');
  for (const [, valid] of reference.answers) t.ok(valid.ok, `valid review alongside the reference: ${valid.detail}`);
  for (const n of ['1e400', '1.0']) {
    const { used, answers } = await cpuOfPairs(n);
    for (const [a, valid] of answers) {
      t.equal(a.status, 200);
      t.equal(a.json?.response?.allowed, false, 'denied: Multus could not read it');
      t.ok(a.ms < 10_000, 'answered');
      t.ok(valid.ok, `valid review alongside: ${valid.detail} in ${valid.ms.toFixed(0)} ms`);
    }
    // Each note becomes a counted error, so a note costs more than a plain number: measured 4-5x
    // the reference on a loaded machine. The quadratic parser cost 11-18x this code (2,160 CPU-ms
    // for one pair against 120-190), so 20x the reference fails it and leaves room for noise.
    const ratio = used / Math.max(reference.used, 10);
    t.ok(ratio < 20, `${n}: ${used} ms of server CPU for three pairs, ${ratio.toFixed(1)}x the reference (${reference.used} ms); bar 20x`);
  }
});

t.test('finding 5: hostile NAD annotations get a denial naming them, not a 500', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['nodeSelector of 120,000 items', { 'k8s.v1.cni.cncf.io/nodeSelector': '-,'.repeat(120_000) }],
    ['100,000 resource names', { 'k8s.v1.cni.cncf.io/resourceName': Array.from({ length: 100_000 }, () => 'not a name').join(',') }],
  ];
  for (const [name, annotations] of cases) {
    const a = await post(s, '/validate', nadReview(annotations));
    t.equal(a.status, 200, name);
    t.equal(a.json?.response?.allowed, false, name);
    t.not(a.json?.response?.status?.code, 500, `${name}: ${String(a.json?.response?.status?.message).slice(0, 200)}`);
    t.match(a.json?.response?.status?.message, /more errors not listed|and \d+ more/, `${name}: the rest counted`);
  }
  await alive(t, 'after the NAD reviews');
});

t.test('finding 6: a NAD with 80,000 plugins and a 246 KiB resourceName write short log lines', async (t) => {
  const before = s.lines.length;
  await post(s, '/validate', nadReview({}, manyPlugins(80_000)));
  await post(s, '/validate', nadReview({ 'k8s.v1.cni.cncf.io/resourceName': `${'x'.repeat(246 * 1024)}/y` }));
  for (let i = 0; i < 50 && s.lines.length < before + 2; i++) await new Promise((r) => setTimeout(r, 100));
  const longest = longestLine(s);
  t.ok(longest < 64 * 1024, `longest log line ${longest} bytes (was 12.3 MB and 2.4 MB)`);
  t.ok(
    s.lines.slice(before).some((l) => /"msg":"denied"/.test(l) && /more/.test(l)),
    'the denial line says how many reasons were left out',
  );
  await alive(t, 'after the NAD configs');
});
