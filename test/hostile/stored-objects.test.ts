// Issue 37, findings 1, 2, 4 and 6 replayed on a real `netattach serve` in cluster mode with the
// production heap cap, against a fake API server that pages lists as kube-apiserver does (limit and
// continue; netattach asks 500 a page):
//   2. 500 Pending pods each with a 250 KB annotation netattach does not use: one 125 MB page of
//      the pod metadata list, and 100 NADs carrying the same;
//   4. 100 ResourceClaimTemplates of about 1 MB, their selectors full of resourceName literals;
//   1. reviews of a Pod CREATE whose name is 1.8 MB (the apiserver validates only after the
//      mutating webhooks);
//   5. 16 concurrent reviews naming 40 explicit-claim NADs whose templates are absent;
//   6. thousands of silent connections on the health port.
// Each asserts: alive, peak RSS under the container limit, a valid review answered alongside. On
// the code before the bounds, serve ran its heap out during the first list (finding 2) and never
// became ready.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  getText,
  hostileNadObject,
  NAMESPACE,
  post,
  review,
  sleep,
  startServe,
  validReviewAnswered,
  type Serve,
} from '../../bench/hostile-lib.js';
import { POLICIES_PATH } from '../../src/policy/index.js';
import { FakeApiServer } from '../kube/fake-apiserver.js';

t.setTimeout(900_000);

/** The Deployment's memory limit (320Mi), MiB. */
const CONTAINER_LIMIT_MB = 320;
const PODS = '/api/v1/pods';
const _NADS = '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions';
const RESOURCE_API = '/apis/resource.k8s.io/v1';
const BLOB = 'b'.repeat(250_000);
const BLOB_PODS = 500;
const BLOB_NADS = 100;
const TEMPLATES = 100;
/** Explicit-claim NADs whose templates do not exist (finding 5). */
const CLAIM_NADS = 40;

const claimNad = (i: number) => {
  const nad = hostileNadObject(`claim-${i}`, 'example.com/nic') as { metadata: { annotations: Record<string, string> } };
  nad.metadata.annotations['netattach.io/resourceClaimTemplate'] = `absent-${i}`;
  return nad;
};

const blobPod = (i: number) => ({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: {
    namespace: NAMESPACE,
    name: `blob-${i}`,
    uid: `uid-blob-${i}`,
    resourceVersion: String(100 + i),
    annotations: { 'example.com/blob': BLOB },
  },
});

const blobNad = (i: number) => {
  const nad = hostileNadObject(`blob-nad-${i}`, 'intel.com/sriov_b') as { metadata: { annotations: Record<string, string> } };
  nad.metadata.annotations['example.com/blob'] = BLOB;
  return nad;
};

/** A template of ~1 MB: 32 requests of 8 alternatives, each with 4 selectors of a ~1000-character literal. */
const bigTemplate = (i: number) => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { namespace: NAMESPACE, name: `tpl-${i}`, uid: `uid-tpl-${i}`, resourceVersion: String(5000 + i) },
  spec: {
    spec: {
      devices: {
        requests: Array.from({ length: 32 }, (_, r) => ({
          name: `r${r}`,
          firstAvailable: Array.from({ length: 8 }, (_, a) => ({
            name: `a${a}`,
            deviceClassName: 'sriov',
            selectors: Array.from({ length: 4 }, (_, k) => ({
              cel: { expression: `device.attributes["k8s.cni.cncf.io"].resourceName == "${`v${i}-${r}-${a}-${k}-`.padEnd(950, 'x')}"` },
            })),
          })),
        })),
      },
    },
  },
});

const api = new FakeApiServer();
let s: Serve | undefined;
/** serve as it ships (compiled), not under tsx: see ServeOptions.main. */
const ROOT = join(fileURLToPath(import.meta.url), '../../..');
const OUT = join(ROOT, 'test/hostile/.dist');
const MAIN = join(OUT, 'src/cli/main.js');

t.before(async () => {
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', OUT],
    { encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`tsc failed: ${tsc.stdout}${tsc.stderr}`);
  api.add(hostileNadObject('sriov-a', 'intel.com/sriov_a'));
  for (let i = 0; i < BLOB_NADS; i++) api.add(blobNad(i));
  for (let i = 0; i < CLAIM_NADS; i++) api.add(claimNad(i));
  api.setList(POLICIES_PATH, [], '1');
  api.setList('/api/v1/namespaces', [{ metadata: { name: NAMESPACE, labels: { 'kubernetes.io/metadata.name': NAMESPACE } } }], '1');
  api.setList(
    PODS,
    Array.from({ length: BLOB_PODS }, (_, i) => blobPod(i)),
    '10',
  );
  api.setList(`${RESOURCE_API}/deviceclasses`, [], '1');
  api.setList(
    `${RESOURCE_API}/resourceclaimtemplates`,
    Array.from({ length: TEMPLATES }, (_, i) => bigTemplate(i)),
    '10',
  );
  await api.listen();
});
t.teardown(async () => {
  await s?.stop();
  await api.close();
});

/** Starts serve among the stored objects and follows it: ready, alive, peak RSS, a valid review. */
async function startAmongThem(t: Test, when: string): Promise<Serve> {
  const started = performance.now();
  const serve = await startServe({
    kubeconfig: api.kubeconfig('test-token'),
    extraArgs: ['--no-address-claims'],
    readyWithinMs: 240_000,
    main: MAIN,
  });
  const ready = (await getText(`${serve.healthUrl}/readyz`).catch(() => ({ status: 0, text: '' }))).status === 200;
  t.ok(ready, `${when}: ready (${Math.round(performance.now() - started)} ms): ${serve.exited() ? serve.stderr().slice(-300) : ''}`);
  t.notOk(serve.exited(), `${when}: alive`);
  const valid = await validReviewAnswered(serve);
  t.ok(valid.ok, `${when}: a valid review answered: ${valid.detail}`);
  const { peak } = serve.rssMb();
  t.ok(peak < CONTAINER_LIMIT_MB, `${when}: peak RSS ${peak.toFixed(1)} MiB < the ${CONTAINER_LIMIT_MB} MiB container limit`);
  return serve;
}

t.test('findings 2 and 4: a start among 500 blob pods, 100 blob NADs and 100 1 MB templates', async (t) => {
  const page = JSON.stringify({ items: Array.from({ length: BLOB_PODS }, (_, i) => blobPod(i)) }).length;
  t.ok(page > 125_000_000, `one page of the pod list is ${(page / 1e6).toFixed(0)} MB`);
  s = await startAmongThem(t, 'first start');
  t.ok(
    api.requests.some((r) => r.path === PODS && r.query.get('limit') === '500' && r.query.get('watch') !== 'true'),
    'the pods were listed 500 a page: the whole 125 MB in one answer',
  );
});

t.test('finding 1: Pod CREATE reviews with a 1.8 MB name are denied at once and keep nothing', async (t) => {
  if (!s || s.exited()) return void t.fail('serve is not running');
  const name = 'a'.repeat(1_800_000);
  const body = review(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NAMESPACE, annotations: { 'k8s.v1.cni.cncf.io/networks': 'sriov-a' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
    'Pod',
    'pods',
  );
  const before = s.rssMb().rss;
  let denied = 0;
  let longest = 0;
  for (let i = 0; i < 100; i++) {
    const a = await post(s, '/mutate', body);
    if (a.status === 200 && a.json?.response?.allowed === false && a.json.response.status?.code === 422) denied++;
    longest = Math.max(longest, JSON.stringify(a.json ?? '').length);
  }
  t.equal(denied, 100, 'each denied with 422');
  t.ok(longest < 4_000, `the denial does not echo the name (${longest} characters)`);
  t.notOk(s.exited(), 'alive');
  const grown = s.rssMb().rss - before;
  t.ok(grown < 48, `RSS grew ${grown.toFixed(0)} MiB over 100 reviews of 1.8 MB (180 MB sent)`);
  t.ok(s.rssMb().peak < CONTAINER_LIMIT_MB, `peak RSS ${s.rssMb().peak.toFixed(1)} MiB`);
  t.ok((await validReviewAnswered(s)).ok, 'a valid review answered alongside');
});

t.test('finding 5: 16 concurrent reviews naming 40 explicit-claim NADs whose templates are absent', async (t) => {
  if (!s || s.exited()) return void t.fail('serve is not running');
  api.defaultGetBehaviour = { delayMs: 300 };
  api.maxGetsInFlight = 0;
  const getsBefore = api.gets;
  const networks = Array.from({ length: CLAIM_NADS }, (_, i) => `claim-${i}`).join(',');
  const body = review(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'claims', namespace: NAMESPACE, annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
    'Pod',
    'pods',
  );
  const answers = await Promise.all(Array.from({ length: 16 }, () => post(s!, '/mutate', body)));
  api.defaultGetBehaviour = {};
  t.ok(
    answers.every((a) => a.status === 200 && a.json?.response),
    `all 16 answered (${answers.map((a) => a.status).join(' ')})`,
  );
  t.ok(api.maxGetsInFlight <= 16, `at most 16 template GETs in flight (${api.maxGetsInFlight}; 640 before the bound)`);
  const gets = api.gets - getsBefore;
  t.ok(gets <= 2 * CLAIM_NADS, `${gets} GETs for 16 x 40 template lookups: one per name at a time, absent ones remembered`);
  t.notOk(s.exited(), 'alive');
  t.ok((await validReviewAnswered(s)).ok, 'a valid review answered alongside');
});

t.test('finding 6: 3,000 silent connections on the health port do not keep a probe out', async (t) => {
  if (!s || s.exited()) return void t.fail('serve is not running');
  const port = Number(new URL(s.healthUrl).port);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < 3_000; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    sockets.push(socket);
    if (i % 200 === 199) await sleep(20);
  }
  await sleep(500);
  const probe = await getText(`${s.healthUrl}/healthz`).catch((e: Error) => ({ status: 0, text: e.message }));
  t.equal(probe.status, 200, `/healthz answers among them (${probe.text.slice(0, 100)})`);
  const open = sockets.filter((x) => !x.destroyed && x.readyState === 'open').length;
  t.ok(open <= 512, `at most 512 of them still open (${open})`);
  for (const x of sockets) x.destroy();
  t.ok((await validReviewAnswered(s)).ok, 'a valid review answered alongside');
});

t.test('a restart among the same objects comes up and stays up', async (t) => {
  await s?.stop();
  s = await startAmongThem(t, 'restart');
  await sleep(10_000);
  t.notOk(s.exited(), 'alive 10 s after its readiness');
  t.equal((await getText(`${s.healthUrl}/readyz`)).status, 200, 'still ready');
});
