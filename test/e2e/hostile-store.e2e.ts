/**
 * End-to-end (issue 37): a restart among hostile stored objects comes up and stays up, on a real
 * kube-apiserver. The store holds 500 Pending pods (no kubelet here) each carrying a 250 KB
 * annotation netattach does not use, 100 NADs carrying the same, and a few pods whose networks
 * annotation is valid but padded with whitespace to ~200 KB. One page of the pod metadata list is
 * then ~125 MB. netattach runs as the Deployment runs it (its NODE_OPTIONS heap cap and
 * MALLOC_ARENA_MAX); the container limit is 320 MiB. Restarted twice among these objects, it must
 * be ready within a bound scaled from a reference start in the same run, still alive and ready
 * 30 s later, peak RSS (VmHWM) under 320 MiB, and admit and mutate a pod with a network.
 * The store also holds more KubeVirt objects than netattach keeps (its binding registry's total
 * bound, src/kubevirt/bindings.ts), each registering ~10,000 binding plugins (its per-object bound
 * is 64): read at every start, kept as a summary each.
 *
 *   npm run test:e2e       (alone: npx tap --disable-coverage --timeout=1500 test/e2e/hostile-store.e2e.ts)
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { deploymentEnv, startE2e, type E2e } from './lib/env.js';
import { httpGet, type Netattach } from './lib/netattach.js';
import { RESOURCE_NAME, macvlanConfig, namespace, nad, pod, sriovConfig } from './lib/objects.js';
import { METADATA_ACCEPT } from '../../src/kube/index.js';
import { LIVE_PODS_FIELD_SELECTOR } from '../../src/policy/index.js';

type PodJson = {
  metadata: { name: string };
  spec: { containers: Array<{ resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }> };
};

const NAMESPACES = ['e2e-hostile-a', 'e2e-hostile-b'];
const NS = NAMESPACES[0]!;
const BLOB_PODS = Number(process.env.NETATTACH_E2E_HOSTILE_PODS ?? 500);
const BLOB_NADS = 100;
const PADDED_PODS = 5;
/** Under the API's 256 KiB for all of an object's annotations together. */
const BLOB_BYTES = 250_000;
const PADDED_BYTES = 200_000;
const BLOB_KEY = 'example.com/blob';
/** Parallel POSTs while filling the store: enough to keep the apiserver busy, no more. */
const CONCURRENCY = 8;
/** The Deployment's memory limit (manifests/base/deployment.yaml). */
const LIMIT_MIB = 320;
/** KubeVirt objects past netattach's total bound (16), each with this many binding plugins (~0.5 MB, under etcd's 1.5 MiB with managedFields). */
const KUBEVIRTS = 20;
const KUBEVIRT_PLUGINS = 10_000;
const KUBEVIRTS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'kubevirts.kubevirt.io' },
  spec: {
    group: 'kubevirt.io',
    scope: 'Namespaced',
    names: { kind: 'KubeVirt', plural: 'kubevirts', singular: 'kubevirt', listKind: 'KubeVirtList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};
const hostileKubevirt = (ns: string, name: string): string =>
  JSON.stringify({
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name, namespace: ns },
    spec: {
      configuration: {
        network: {
          binding: Object.fromEntries(
            Array.from({ length: KUBEVIRT_PLUGINS }, (_, i) => [`p${i}`, { networkAttachmentDefinition: `n${i}` }]),
          ),
        },
      },
    },
    status: { phase: 'Deployed' },
  });
/** How long it must stay up and ready after its readiness. */
const STAY_UP_MS = 30_000;
/** waitReady's default: the suite's usual readiness timeout, the floor of the bound. */
const USUAL_READY_MS = 60_000;
/** The bound on readiness among the hostile objects, as a multiple of the reference (below). */
const READY_RATIO = 5;
const NET = 'hostile-net';
const NET_RESOURCE = 'example.com/hostile_vf';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let e: E2e;
let agent: https.Agent;
/** The reference: readiness on the empty cluster, and how long a plain client takes to read the hostile pod list. */
let emptyStartMs = 0;
let rawListMs = 0;
const suiteStart = Date.now();

// The bodies are made once: every blob pod and NAD writes the same buffer between its own head and tail.
const BLOB = Buffer.from(randomBytes((BLOB_BYTES * 3) / 4).toString('base64'));
const PADDING = ' '.repeat(PADDED_BYTES / 2);
const PADDED_NETWORKS = `[${PADDING}{"name":"${NET}"}${PADDING}]`;

/** POST to the apiserver as admin, the body written in pieces (the shared blob is not copied). Reads the answer whole only when asked. */
function post(urlPath: string, pieces: Array<string | Buffer>, keepBody = false): Promise<{ status: number; body: string }> {
  return request('POST', urlPath, pieces, keepBody);
}

function request(
  method: string,
  urlPath: string,
  pieces: Array<string | Buffer>,
  keepBody: boolean,
  accept = 'application/json',
): Promise<{ status: number; body: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const length = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
    const req = https.request(
      new URL(urlPath, e.cluster.server),
      {
        method,
        agent,
        timeout: 120_000,
        headers: {
          authorization: `Bearer ${e.cluster.token}`,
          accept,
          ...(length ? { 'content-type': 'application/json', 'content-length': length } : {}),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let body = '';
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
          // An error or a wanted answer is kept; a created 250 KB object is only counted.
          if (keepBody || status >= 300) body += d.toString('utf8');
        });
        res.on('end', () => resolve({ status, body, bytes }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer within 120 s`)));
    req.on('error', reject);
    for (const p of pieces) req.write(p);
    req.end();
  });
}

/** Runs `jobs` with at most `width` at once. */
async function pool<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

const blobPod = (ns: string, name: string): Array<string | Buffer> => [
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}","namespace":"${ns}","annotations":{"${BLOB_KEY}":"`,
  BLOB,
  `"}},"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.10"}]}}`,
];

const blobNad = (ns: string, name: string): Array<string | Buffer> => [
  `{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition","metadata":{"name":"${name}","namespace":"${ns}","annotations":{"${BLOB_KEY}":"`,
  BLOB,
  `"}},"spec":{"config":${JSON.stringify(JSON.stringify(macvlanConfig(name)))}}}`,
];

const failed = (rs: Array<{ status: number; body: string }>): string[] =>
  rs.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.body.slice(0, 300)}`);

/** Highest resident set of the process so far (kB), or undefined once it is gone. */
function vmHwmKb(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

const mib = (kb: number): string => (kb / 1024).toFixed(1);

interface Run {
  label: string;
  readyMs?: number;
  /** VmHWM last read while it lived (kB): a process killed between two reads peaked at least here. */
  peakKb: number;
  /** VmHWM (kB) at which the test killed it, as the kernel would at the container limit. */
  limitKilledKb?: number;
  /** Why it did not come up or stay up: exit code and signal, log tail. */
  failure?: string;
  /** /readyz or /healthz answers other than 200 while it should have stayed up. */
  unready: string[];
}

/** How the process ended, from the harness's line in its log, and the end of its stderr/stdout. */
async function deathOf(n: Netattach, run: Run, sinceStart: number): Promise<string> {
  // The exit is settled, and the harness's line about it written out, before the log is read.
  await n.stop();
  await sleep(200);
  const exits = n.logLines().filter((l) => l.e2e === 'exited');
  const last = exits[exits.length - 1];
  const how = last ? `exit code ${String(last.code)}, signal ${String(last.signal)}` : 'no exit recorded';
  const log = n.readLog();
  const thisStart = log.slice(log.lastIndexOf('{"e2e":"start #'));
  const tail = thisStart
    .trimEnd()
    .split('\n')
    .slice(-25)
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l))
    .join('\n');
  const limit =
    run.limitKilledKb === undefined
      ? ''
      : `killed by the test at VmHWM ${mib(run.limitKilledKb)} MiB, as the container limit of ${LIMIT_MIB} MiB would; `;
  return `netattach exited ${sinceStart} ms after its start (${limit}${how}); last lines of its output:\n${tail}`;
}

/**
 * Starts netattach and follows it: VmHWM every 100 ms (at the container limit it is SIGKILLed,
 * as the kernel would kill the container: no cgroup is ours to set here), readiness within
 * `boundMs`; with `probeName`, then /readyz and /healthz every second for STAY_UP_MS, and a pod
 * with a network created right after the readiness and again at the end, through the apiserver
 * (so through both webhooks).
 */
async function startAndFollow(t: Test, label: string, boundMs: number, probeName?: string): Promise<Run> {
  const n = e.netattach;
  const run: Run = { label, peakKb: 0, unready: [] };
  const t0 = Date.now();
  n.start();
  const pid = n.pid!;
  const sampler = setInterval(() => {
    const kb = vmHwmKb(pid);
    if (kb === undefined) return;
    run.peakKb = Math.max(run.peakKb, kb);
    if (kb >= LIMIT_MIB * 1024 && run.limitKilledKb === undefined) {
      run.limitKilledKb = kb;
      process.kill(pid, 'SIGKILL');
    }
  }, 100);
  try {
    for (;;) {
      if (!n.running) {
        run.failure = await deathOf(n, run, Date.now() - t0);
        // What the cluster sees meanwhile (failurePolicy Fail): no pod with networks is created.
        if (probeName) await admitsAPod(t, `${probeName}-while-down`, `${label}: after it died`);
        return run;
      }
      const r = await httpGet(`${n.healthUrl}/readyz`).catch(() => undefined);
      if (r?.status === 200) break;
      if (Date.now() - t0 > boundMs) {
        run.failure = `not ready within ${boundMs} ms; last /readyz: ${r ? `${r.status} ${r.body.slice(0, 500)}` : 'no answer'}\n${n.tail(25)}`;
        if (probeName) await admitsAPod(t, `${probeName}-unready`, `${label}: not ready in time`);
        return run;
      }
      await sleep(100);
    }
    run.readyMs = Date.now() - t0;
    if (!probeName) return run;
    await admitsAPod(t, `${probeName}-at-ready`, `${label}: right after the readiness`);
    const until = Date.now() + STAY_UP_MS;
    while (Date.now() < until) {
      await sleep(1000);
      if (!n.running) {
        run.failure = await deathOf(n, run, Date.now() - t0);
        return run;
      }
      for (const p of ['/readyz', '/healthz']) {
        const r = await httpGet(`${n.healthUrl}${p}`).catch((err: Error) => ({ status: 0, body: err.message }));
        if (r.status !== 200) run.unready.push(`${Date.now() - t0} ms: ${p} ${r.status} ${r.body.slice(0, 300)}`);
      }
    }
    await admitsAPod(t, `${probeName}-after-30s`, `${label}: ${STAY_UP_MS / 1000} s later`);
    return run;
  } finally {
    clearInterval(sampler);
    const kb = vmHwmKb(pid);
    if (kb !== undefined) run.peakKb = Math.max(run.peakKb, kb);
  }
}

/** A pod selecting NET is created through the apiserver and comes back with the NAD's resource. */
async function admitsAPod(t: Test, name: string, when: string): Promise<void> {
  const r = await post(`/api/v1/namespaces/${NS}/pods`, [JSON.stringify(pod(NS, name, NET))], true);
  t.equal(r.status, 201, `${when}: a pod with a network is admitted (${r.status} ${r.status === 201 ? '' : r.body.slice(0, 500)})`);
  if (r.status === 201) {
    const created = JSON.parse(r.body) as PodJson;
    t.same(created.spec.containers[0]!.resources?.requests, { [NET_RESOURCE]: '1' }, `${when}: and mutated (the NAD's resource requested)`);
  }
}

/** The assertions every start among the hostile objects must meet. */
function judge(t: Test, run: Run, boundMs: number): void {
  const peak = `peak RSS (VmHWM) ${mib(run.peakKb)} MiB`;
  t.comment(
    `${run.label}: ${run.readyMs === undefined ? 'never ready' : `ready in ${run.readyMs} ms (${(run.readyMs / emptyStartMs).toFixed(1)}x the empty start)`}, ${peak}`,
  );
  t.ok(
    run.readyMs !== undefined && run.readyMs <= boundMs,
    `${run.label}: ready within ${boundMs} ms${run.failure ? `; ${peak}; ${run.failure}` : ''}`,
  );
  t.ok(run.failure === undefined, `${run.label}: alive ${STAY_UP_MS / 1000} s after its readiness${run.failure ? `; ${peak}` : ''}`);
  if (run.readyMs !== undefined) t.same(run.unready, [], `${run.label}: /readyz and /healthz answered 200 throughout`);
  t.ok(run.peakKb > 0 && run.peakKb < LIMIT_MIB * 1024, `${run.label}: ${peak}, under the container limit of ${LIMIT_MIB} MiB`);
}

/** Readiness among the hostile objects: READY_RATIO times (empty start + the plain read of the list), never under the usual timeout. */
const readyBound = (): number => Math.max(USUAL_READY_MS, Math.round(READY_RATIO * (emptyStartMs + rawListMs)));

t.before(async () => {
  const t0 = Date.now();
  e = await startE2e((m) => t.comment(m));
  agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: e.cluster.caPem });
  // As the Deployment runs it: its V8 heap cap and malloc arenas.
  const nodeOptions = deploymentEnv(e.base, 'NODE_OPTIONS');
  const arenas = deploymentEnv(e.base, 'MALLOC_ARENA_MAX');
  if (!nodeOptions?.includes('--max-old-space-size='))
    throw new Error(`the Deployment sets no heap cap in NODE_OPTIONS (${String(nodeOptions)})`);
  Object.assign(e.netattach.options, { nodeOptions, env: { ...e.netattach.options.env, ...(arenas ? { MALLOC_ARENA_MAX: arenas } : {}) } });
  await e.applyOk([
    ...NAMESPACES.map((ns) => namespace(ns)),
    nad({ namespace: NS, name: NET, config: sriovConfig(NET), annotations: { [RESOURCE_NAME]: NET_RESOURCE } }),
  ]);
  t.comment(
    `cluster, manifests, netattach and webhooks up in ${Date.now() - t0} ms; netattach runs with NODE_OPTIONS=${nodeOptions} MALLOC_ARENA_MAX=${arenas ?? '(unset)'}`,
  );
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  agent?.destroy();
  await e?.stop();
  process.stderr.write(`[e2e] hostile-store: ${((Date.now() - suiteStart) / 1000).toFixed(0)} s in all\n`);
});

t.test('reference: a restart on the empty cluster, production NODE_OPTIONS', async (t) => {
  await e.netattach.stop();
  const run = await startAndFollow(t, 'empty-cluster restart', USUAL_READY_MS);
  t.ok(run.readyMs !== undefined, `ready on the empty cluster${run.failure ? `: ${run.failure}` : ''}`);
  emptyStartMs = run.readyMs ?? USUAL_READY_MS;
  t.comment(`empty cluster: ready in ${emptyStartMs} ms, peak RSS (VmHWM) ${mib(run.peakKb)} MiB`);
});

t.test(
  `the store filled: ${BLOB_PODS} pods and ${BLOB_NADS} NADs with a ${BLOB_BYTES / 1000} KB foreign annotation, ${PADDED_PODS} pods with a padded networks annotation`,
  async (t) => {
    const t0 = Date.now();
    // No networks annotation: the webhooks' matchConditions admit them without a call.
    const pods = await pool(
      Array.from({ length: BLOB_PODS }, (_, i) => {
        const ns = NAMESPACES[i % NAMESPACES.length]!;
        return () => post(`/api/v1/namespaces/${ns}/pods`, blobPod(ns, `blob-${i}`));
      }),
      CONCURRENCY,
    );
    t.same(failed(pods), [], `${BLOB_PODS} blob pods created`);
    const t1 = Date.now();
    // NADs go through nads.netattach.io: a foreign annotation is no reason to refuse one.
    const nads = await pool(
      Array.from(
        { length: BLOB_NADS },
        (_, i) => () => post(`/apis/k8s.cni.cncf.io/v1/namespaces/${NS}/network-attachment-definitions`, blobNad(NS, `blob-nad-${i}`)),
      ),
      CONCURRENCY,
    );
    t.same(failed(nads), [], `${BLOB_NADS} blob NADs admitted by netattach and created`);
    // KubeVirt objects, more than netattach keeps and each past its per-object bound (no webhook sees them).
    await e.applyOk(KUBEVIRTS_CRD);
    await e.cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/kubevirts.kubevirt.io']);
    const kubevirts: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < KUBEVIRTS; i++) {
      const path = `/apis/kubevirt.io/v1/namespaces/${NAMESPACES[i % NAMESPACES.length]}/kubevirts`;
      let r = await post(path, [hostileKubevirt(NAMESPACES[i % NAMESPACES.length]!, `kv-${i}`)]);
      // The CRD established a moment ago may not be served yet.
      for (let tries = 0; r.status === 404 && tries < 50; tries++) {
        await sleep(200);
        r = await post(path, [hostileKubevirt(NAMESPACES[i % NAMESPACES.length]!, `kv-${i}`)]);
      }
      kubevirts.push(r);
    }
    t.same(failed(kubevirts), [], `${KUBEVIRTS} KubeVirt objects of ${KUBEVIRT_PLUGINS} binding plugins created`);
    const t2 = Date.now();
    // Valid for Multus (JSON allows any whitespace): netattach must admit and mutate them.
    for (let i = 0; i < PADDED_PODS; i++) {
      const r = await post(`/api/v1/namespaces/${NS}/pods`, [JSON.stringify(pod(NS, `padded-${i}`, PADDED_NETWORKS))], true);
      t.equal(
        r.status,
        201,
        `padded-${i} (networks annotation of ${PADDED_NETWORKS.length} bytes) admitted${r.status === 201 ? '' : `: ${r.body.slice(0, 500)}`}`,
      );
      if (r.status === 201)
        t.same((JSON.parse(r.body) as PodJson).spec.containers[0]!.resources?.requests, { [NET_RESOURCE]: '1' }, `padded-${i} mutated`);
    }
    const t3 = Date.now();
    // What netattach's pod watch reads at each start: one page of the live pods' metadata.
    const list = await request(
      'GET',
      `/api/v1/pods?limit=500&fieldSelector=${encodeURIComponent(LIVE_PODS_FIELD_SELECTOR)}`,
      [],
      false,
      METADATA_ACCEPT,
    );
    rawListMs = Date.now() - t3;
    t.equal(list.status, 200, 'the pod metadata list answers');
    t.ok(
      list.bytes > BLOB_PODS * BLOB_BYTES,
      `the first page of the pod metadata list holds the blobs: ${(list.bytes / 1e6).toFixed(0)} MB`,
    );
    t.comment(
      `filled in ${t3 - t0} ms (pods ${t1 - t0} ms, NADs ${t2 - t1} ms, padded pods ${t3 - t2} ms); a plain client read the ${(list.bytes / 1e6).toFixed(0)} MB pod metadata page in ${rawListMs} ms`,
    );
  },
);

t.test('restart among the hostile objects (SIGTERM, as a rollout): comes up and stays up', async (t) => {
  const boundMs = readyBound();
  await e.netattach.stop();
  judge(t, await startAndFollow(t, 'restart 1 (SIGTERM)', boundMs, 'probe-1'), boundMs);
  // The KubeVirt watch read them all (its first list is logged): past the bound, the registry unknown.
  t.match(e.netattach.readLog(), /more than 16 KubeVirt objects/, 'the KubeVirt objects were read, and found past the bound');
});

t.test('restarted once more (SIGKILL, as after a crash): comes up and stays up, no crash loop', async (t) => {
  const boundMs = readyBound();
  await e.netattach.kill();
  judge(t, await startAndFollow(t, 'restart 2 (SIGKILL)', boundMs, 'probe-2'), boundMs);
});

t.test('cleanup: the pods and NADs the suite made are deleted', async (t) => {
  const t0 = Date.now();
  // NAD deletes go through nads.netattach.io (failurePolicy Fail): a replica that died refuses
  // them, so its webhook configurations go first then.
  if (!e.netattach.running) {
    t.comment('netattach is not running: its webhook configurations are deleted first');
    await e.cluster.kubectlOk([
      'delete',
      'mutatingwebhookconfiguration/netattach',
      'validatingwebhookconfiguration/netattach',
      '--ignore-not-found',
    ]);
  }
  for (const ns of NAMESPACES) {
    // Pods never scheduled are deleted at once, no kubelet needed.
    const pods = await request('DELETE', `/api/v1/namespaces/${ns}/pods`, [], false);
    t.equal(pods.status, 200, `pods of ${ns} deleted${pods.status === 200 ? '' : `: ${pods.body.slice(0, 300)}`}`);
    const nads = await request('DELETE', `/apis/k8s.cni.cncf.io/v1/namespaces/${ns}/network-attachment-definitions`, [], false);
    t.equal(nads.status, 200, `NADs of ${ns} deleted${nads.status === 200 ? '' : `: ${nads.body.slice(0, 300)}`}`);
    const kvs = await request('DELETE', `/apis/kubevirt.io/v1/namespaces/${ns}/kubevirts`, [], false);
    t.equal(kvs.status, 200, `KubeVirt objects of ${ns} deleted${kvs.status === 200 ? '' : `: ${kvs.body.slice(0, 300)}`}`);
  }
  for (const ns of NAMESPACES) {
    const left = JSON.parse((await request('GET', `/api/v1/namespaces/${ns}/pods`, [], true)).body) as { items: unknown[] };
    const leftNads = JSON.parse(
      (await request('GET', `/apis/k8s.cni.cncf.io/v1/namespaces/${ns}/network-attachment-definitions`, [], true)).body,
    ) as { items: unknown[] };
    t.equal(left.items.length + leftNads.items.length, 0, `nothing left in ${ns}`);
  }
  t.comment(`cleaned up in ${Date.now() - t0} ms`);
});
