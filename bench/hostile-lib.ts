// Issue 15's attacks on a real `netattach serve` process started as the Deployment starts it
// (NODE_OPTIONS as manifests/base/deployment.yaml sets it, no client CA), with what each one measures. Used by
// test/hostile/ (which asserts bounds with slack) and by the `hostile` bench section (which
// prints the figures the README quotes).
import https from 'node:https';
import tls from 'node:tls';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const compiled = extname(self) === '.js';
// dist/bench/hostile-lib.js -> dist/src/cli/main.js; bench/hostile-lib.ts -> src/cli/main.ts (tsx)
const mainScript = resolve(dirname(self), '../src/cli', compiled ? 'main.js' : 'main.ts');
const nodeArgs = compiled ? [mainScript] : ['--import', 'tsx', mainScript];
/** The Deployment's heap cap (manifests/base/deployment.yaml). */
export const PRODUCTION_NODE_OPTIONS = '--max-old-space-size=192 --max-semi-space-size=1';
export const NAMESPACE = 'hostile';

export interface Serve {
  child: ChildProcess;
  url: string;
  healthUrl: string;
  ca: string;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  exited: () => boolean;
  /** What the process wrote to stderr so far (a crash's reason). */
  stderr: () => string;
  rssMb: () => { rss: number; peak: number };
  stop: () => Promise<void>;
}

const nad = (name: string, resourceName: string) =>
  JSON.stringify({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: NAMESPACE, annotations: { 'k8s.v1.cni.cncf.io/resourceName': resourceName } },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name, plugins: [{ type: 'sriov', capabilities: { mac: true, ips: true } }] }) },
  });
/** A NAD object of NAMESPACE (`sriov-a`, `intel.com/sriov_a` is what valid reviews select): for a fake API server in cluster mode. */
export const hostileNadObject = (name: string, resourceName: string): Record<string, unknown> =>
  JSON.parse(nad(name, resourceName)) as Record<string, unknown>;

function procStatus(pid: number): { rss: number; peak: number } {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

export interface ServeOptions {
  /** More `serve` flags, e.g. `--client-ca FILE` (test/hostile/client-auth.test.ts). */
  extraArgs?: string[];
  /**
   * Cluster mode: the text of a kubeconfig (written to a file, passed as --kubeconfig) instead of
   * the NAD directory. The API server it names must serve the NADs (with `sriov-a`), policies and
   * namespaces, or `extraArgs` must turn those watches off (test/hostile/lookups.test.ts).
   */
  kubeconfig?: string;
  /** Policy documents (YAML), passed as `--policy FILE`. */
  policy?: string;
  /** More NAD files for the NAD directory: file name -> content. */
  nads?: Record<string, string>;
  /** How long to wait for /readyz (default 20 s; cluster mode syncs several watches first). */
  readyWithinMs?: number;
  /**
   * A compiled `main.js` to run instead of this file's choice: under tsx, serve's own heap holds
   * the transpiler's modules, and a replay at the production heap cap measures that too.
   */
  main?: string;
}

/**
 * Starts `serve` with certificates from `netattach certs`, one NAD from a directory (or the cluster
 * of `options.kubeconfig`); resolves when both ports listen.
 */
export async function startServe(options: ServeOptions = {}): Promise<Serve> {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-hostile-'));
  const tlsDir = join(dir, 'tls');
  const nads = join(dir, 'nads');
  mkdirSync(nads);
  writeFileSync(join(nads, 'sriov.json'), nad('sriov-a', 'intel.com/sriov_a'));
  for (const [file, content] of Object.entries(options.nads ?? {})) writeFileSync(join(nads, file), content);
  const policyArgs: string[] = [];
  if (options.policy !== undefined) {
    writeFileSync(join(dir, 'policy.yaml'), options.policy);
    policyArgs.push('--policy', join(dir, 'policy.yaml'));
  }
  const env = { ...process.env, NODE_OPTIONS: PRODUCTION_NODE_OPTIONS };
  const args = options.main ? [options.main] : nodeArgs;
  const certs = spawnSync(
    process.execPath,
    [
      ...args,
      'certs',
      '--out',
      tlsDir,
      '--service',
      'netattach',
      '--namespace',
      'netattach-system',
      '--san',
      '127.0.0.1',
      '--san',
      'localhost',
    ],
    { env, encoding: 'utf8' },
  );
  if (certs.status !== 0) throw new Error(`netattach certs failed: ${certs.stderr}`);
  const ca = readFileSync(join(tlsDir, 'ca.crt'), 'utf8');
  let source = ['--nads', nads];
  if (options.kubeconfig !== undefined) {
    writeFileSync(join(dir, 'kubeconfig'), options.kubeconfig);
    source = ['--kubeconfig', join(dir, 'kubeconfig')];
  }
  const serveArgs = [
    'serve',
    '--tls-dir',
    tlsDir,
    ...source,
    '--port',
    '0',
    '--health-port',
    '0',
    '--host',
    '127.0.0.1',
    ...policyArgs,
    ...(options.extraArgs ?? []),
  ];
  // Through env(1), which sets NODE_OPTIONS afresh and execs node (same pid): a test runner that
  // adds its own --import to NODE_OPTIONS of every child (tap's processinfo) would otherwise load
  // into serve, and its hooks alone ran serve's heap out on a 125 MB list the Deployment reads.
  const child = spawn(
    '/usr/bin/env',
    ['-u', 'NODE_OPTIONS', `NODE_OPTIONS=${PRODUCTION_NODE_OPTIONS}`, process.execPath, ...args, ...serveArgs],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let exited = false;
  let partial = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
  const listening = new Promise<{ url: string; healthUrl: string }>((resolveUrls, reject) => {
    let url: string | undefined;
    let healthUrl: string | undefined;
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (partial + String(d)).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        url ??= /listening at (https:\/\/[^"]+)/.exec(line)?.[1];
        healthUrl ??= /listening at (http:\/\/[^"]+)/.exec(line)?.[1];
        if (url && healthUrl) resolveUrls({ url, healthUrl });
      }
    });
    child.on('exit', (code) => {
      exited = true;
      reject(new Error(`serve exited (${code}) before listening: ${stderr}`));
    });
  });
  const urls = await listening;
  // Ready once the NAD directory has been read.
  const readyBy = performance.now() + (options.readyWithinMs ?? 20_000);
  while (performance.now() < readyBy && (await getText(`${urls.healthUrl}/readyz`).catch(() => ({ status: 0 }))).status !== 200)
    await sleep(100);
  return {
    child,
    ...urls,
    ca,
    lines,
    exited: () => exited,
    stderr: () => stderr,
    rssMb: () => procStatus(child.pid!),
    stop: async () => {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([gone, sleep(10_000)]);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function getText(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

export interface Answer {
  status: number;
  json: any;
  ms: number;
  error?: string;
}

/** One POST over HTTPS; never rejects (a reset or refusal comes back as status 0 with the error). */
export function post(
  s: Pick<Serve, 'url' | 'ca'>,
  path: string,
  body: string | Buffer,
  agent: https.Agent | false = false,
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolveAnswer) => {
    const req = https.request(
      `${s.url}${path}`,
      { method: 'POST', ca: s.ca, agent, servername: 'localhost', headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            json = undefined;
          }
          resolveAnswer({ status: res.statusCode ?? 0, json, ms: performance.now() - started });
        });
        res.on('error', (e) => resolveAnswer({ status: 0, json: undefined, ms: performance.now() - started, error: e.message }));
      },
    );
    req.on('error', (e) => resolveAnswer({ status: 0, json: undefined, ms: performance.now() - started, error: e.message }));
    req.end(body);
  });
}

let uid = 0;
export function review(object: Record<string, unknown>, kind: string, resource: string, group = ''): string {
  const meta = object.metadata as { name?: string } | undefined;
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `hostile-${process.pid}-${++uid}`,
      kind: { group, version: group ? 'v1' : 'v1', kind },
      resource: { group, version: 'v1', resource },
      name: meta?.name,
      namespace: NAMESPACE,
      operation: 'CREATE',
      userInfo: { username: 'attacker' },
      object,
      oldObject: null,
      dryRun: false,
    },
  });
}

export const podReview = (networks: string): string =>
  review(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: NAMESPACE, annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
    'Pod',
    'pods',
  );

/** A valid review and the answer it must get: allowed, with the SR-IOV resource patched in. */
export async function validReviewAnswered(
  s: Pick<Serve, 'url' | 'ca'>,
  agent: https.Agent | false = false,
): Promise<{ ok: boolean; ms: number; detail: string }> {
  const a = await post(s, '/mutate', podReview('sriov-a'), agent);
  const patch = a.json?.response?.patch ? Buffer.from(String(a.json.response.patch), 'base64').toString() : '';
  const ok = a.status === 200 && a.json?.response?.allowed === true && patch.includes('intel.com/sriov_a');
  return {
    ok,
    ms: a.ms,
    detail: ok ? 'allowed with the resource patch' : `${a.status} ${a.error ?? JSON.stringify(a.json)?.slice(0, 300)}`,
  };
}

export const nadReview = (annotations: Record<string, string>, config = ''): string =>
  review(
    {
      apiVersion: 'k8s.cni.cncf.io/v1',
      kind: 'NetworkAttachmentDefinition',
      metadata: { name: 'evil', namespace: NAMESPACE, annotations },
      spec: { config },
    },
    'NetworkAttachmentDefinition',
    'network-attachment-definitions',
    'k8s.cni.cncf.io',
  );

// ---- The findings ------------------------------------------------------------------------

/** Finding 1: `POST /<unique 8 KB path>` with body `{`, n times; the size of /metrics after. */
export async function uniquePaths(s: Serve, n: number): Promise<{ metricsBytes: number; refused: number; seconds: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16 });
  const started = performance.now();
  let refused = 0;
  const pad = 'p'.repeat(8000);
  for (let i = 0; i < n; i += 64) {
    const batch = Array.from({ length: Math.min(64, n - i) }, (_, k) => post(s, `/${i + k}-${pad}`, '{', agent));
    for (const a of await Promise.all(batch)) if (a.status >= 400) refused++;
  }
  agent.destroy();
  const metrics = await getText(`${s.healthUrl}/metrics`);
  return { metricsBytes: Buffer.byteLength(metrics.text), refused, seconds: (performance.now() - started) / 1000 };
}

/** Finding 2: `k` bodies of 4 MB at once, with a valid review sent alongside. */
export async function bigBodies(
  s: Serve,
  k: number,
  body: string,
): Promise<{ answers: Answer[]; valid: Awaited<ReturnType<typeof validReviewAnswered>> }> {
  const [answers, valid] = await Promise.all([
    Promise.all(Array.from({ length: k }, () => post(s, '/validate', body))),
    (async () => {
      await sleep(20);
      return validReviewAnswered(s);
    })(),
  ]);
  return { answers, valid };
}

export const nestedBody = (): string => `${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}`;
export const flatBody = (): string => `[${'[],'.repeat(1_333_000)}[]]`;

/**
 * Finding 3: `n` connections each declaring a 4 MiB body and sending all but 2 KiB of it, then
 * waiting. Samples RSS until all are closed (or `giveUpMs`); a valid review is sent meanwhile.
 */
export async function slowBodies(
  s: Serve,
  n: number,
  giveUpMs: number,
): Promise<{
  peakRssMb: number;
  closedMs: number[];
  lifetimeMs: number[];
  open: number;
  valid: Awaited<ReturnType<typeof validReviewAnswered>>;
}> {
  const u = new URL(s.url);
  const length = 4 * 1024 * 1024;
  const chunk = Buffer.alloc(length - 2048, 0x20);
  const started = performance.now();
  const closedMs: number[] = [];
  /** From each body's headers being sent to its connection closing. */
  const lifetimeMs: number[] = [];
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, s.rssMb().rss)), 100);
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<tls.TLSSocket | undefined>((resolveSocket) => {
          let sentAt = NaN;
          const sock = tls.connect({ host: u.hostname, port: Number(u.port), ca: s.ca, servername: 'localhost' }, () => {
            sentAt = performance.now();
            sock.write(`POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
            sock.write(chunk);
            resolveSocket(sock);
          });
          sock.resume();
          sock.on('error', () => {});
          sock.once('close', () => {
            closedMs.push(performance.now() - started);
            if (!Number.isNaN(sentAt)) lifetimeMs.push(performance.now() - sentAt);
            resolveSocket(undefined);
          });
        }),
    ),
  );
  await sleep(500);
  const valid = await validReviewAnswered(s);
  while (closedMs.length < n && performance.now() - started < giveUpMs) await sleep(100);
  clearInterval(sampler);
  peak = Math.max(peak, s.rssMb().rss);
  const open = n - closedMs.length;
  for (const sock of sockets) sock?.destroy();
  return { peakRssMb: peak, closedMs, lifetimeMs, open, valid };
}

/** Finding 4: 999 elements, then one holding ~41,000 numbers Go cannot read (within 256 KiB). */
export function quadraticAnnotation(number = '1e400'): string {
  const elements = Array.from({ length: 999 }, () => '{"name":"a"}').join(',');
  return `[${elements},{"name":"b","x.y":[${Array.from({ length: 41_000 }, () => number).join(',')}]}]`;
}

/** Finding 6: a NAD config with `n` plugins that each lack `type` (80,000: 1.44 MB). */
export const manyPlugins = (n: number): string =>
  JSON.stringify({ cniVersion: '1.0.0', name: 'evil', plugins: Array.from({ length: n }, () => ({ x: 1 })) });

/** Finding 7: whether a TLS 1.2 handshake offering only `cipher` completes. */
export function handshake(s: Pick<Serve, 'url' | 'ca'>, options: tls.ConnectionOptions): Promise<boolean> {
  const u = new URL(s.url);
  return new Promise((resolveOk) => {
    const sock = tls.connect({ host: u.hostname, port: Number(u.port), ca: s.ca, servername: 'localhost', ...options }, () => {
      sock.destroy();
      resolveOk(true);
    });
    sock.on('error', () => resolveOk(false));
  });
}

export const WEAK_TLS12_SUITES = [
  'AES128-SHA',
  'AES256-GCM-SHA384',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-RSA-AES256-SHA384',
  'AES128-CCM8',
  'ARIA128-GCM-SHA256',
];
export const STRONG_TLS12_SUITES = ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'];

/** CPU milliseconds the server process has used (utime + stime, 10 ms ticks): steadier than wall time on a busy machine. */
export function serverCpuMs(s: Serve): number {
  const fields = readFileSync(`/proc/${s.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Longest stdout line, bytes. */
export const longestLine = (s: Serve): number => s.lines.reduce((m, l) => Math.max(m, Buffer.byteLength(l)), 0);

// ---- Issue 24 (answers) --------------------------------------------------------------------

const outOfRange = Array.from({ length: 600 }, () => '1e400').join(',');
/**
 * Issue 24, finding 2: 600 numbers Go cannot read under a cni-args key of `keyLength` characters
 * (203 KB with a 200 KB key). `run` makes each text new (parsed annotations are cached by text).
 */
export const longKeyAnnotation = (run: number, keyLength = 200_000): string =>
  `[{"name":"sriov-a","x.run":${run},"cni-args":{"${'k'.repeat(keyLength)}":[${outOfRange}]}}]`;
/** The same problems with a 1-character key and 200 KB of padding in an extension key: a normal annotation of that size. */
export const paddedAnnotation = (run: number): string =>
  `[{"name":"sriov-a","x.run":${run},"x.pad":"${'p'.repeat(200_000)}","cni-args":{"k":[${outOfRange}]}}]`;

/** A TLS connection to the webhook port, handshake done; errors swallowed (the server may cut it). */
export function connectTls(s: Pick<Serve, 'url' | 'ca'>): Promise<tls.TLSSocket> {
  const u = new URL(s.url);
  return new Promise((resolveSocket, reject) => {
    const sock = tls.connect({ host: u.hostname, port: Number(u.port), ca: s.ca, servername: 'localhost' }, () => resolveSocket(sock));
    sock.once('error', reject);
  });
}

/** A raw POST of `body` to `path` (Content-Length, application/json). */
export const rawPost = (path: string, body: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

// ---- Issue 24, finding 1: the reservation index ----------------------------------------------

/** MACs unique per network: Warn in the namespace `warnNamespace` (pile-ups are admitted there), Enforce elsewhere. */
export const reservationPolicy = (warnNamespace: string): string => `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: unique-macs}
spec:
  namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [${warnNamespace}]}]}
  rules: {uniqueAddresses: {action: Enforce, mac: Network}}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: warn}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ${warnNamespace}}}
  rules: {uniqueAddresses: {action: Warn, mac: Network}}
`;

/** `count` NADs `mac-0`.. of a plugin with the `mac` capability and no device resource: file name -> content. */
export const macNads = (count: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: count }, (_, n) => [
      `mac-${n}.json`,
      JSON.stringify({
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinition',
        metadata: { name: `mac-${n}`, namespace: NAMESPACE },
        spec: {
          config: JSON.stringify({
            cniVersion: '1.0.0',
            name: `mac-${n}`,
            plugins: [{ type: 'macvlan', master: 'eth0', capabilities: { mac: true } }],
          }),
        },
      }),
    ]),
  );

const macOf = (n: number): string =>
  `02:${[24, 16, 8, 0].map((shift) => ((n >>> shift) & 0xff).toString(16).padStart(2, '0')).join(':')}:01`;

/** A forged `/mutate` Pod CREATE in `namespace` named `name`: `attachments` of sriov-a (NAD namespace `hostile`) with MACs from `firstMac` on. */
export function manyMacPod(
  namespace: string,
  name: string,
  firstMac: number,
  attachments: number,
  network = (_: number) => 'sriov-a',
): string {
  const networks = JSON.stringify(
    Array.from({ length: attachments }, (_, k) => ({ name: network(k), namespace: NAMESPACE, mac: macOf(firstMac + k) })),
  );
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `forged-${namespace}-${name}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'attacker' },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, uid: `uid-${namespace}-${name}`, annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
      oldObject: null,
      dryRun: false,
    },
  });
}

/** A sample of `netattach_…` metrics from the health port: `name{labels}` -> value. */
export async function metricValues(s: Pick<Serve, 'healthUrl'>): Promise<Map<string, number>> {
  const text = (await getText(`${s.healthUrl}/metrics`)).text;
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(netattach_[^\s]+)\s+(\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export interface FloodResult {
  /** Answers by HTTP status and `allowed` (`200 true`, `200 false`, `0`: no answer). */
  answers: Record<string, number>;
  seconds: number;
  /** A valid review on the idle server before the flood (ms each), and during it. */
  validIdleMs: number[];
  validDuringMs: number[];
  /** Each forged review's own answer time (ms): what a review waits behind during the flood. */
  forgedMs: number[];
  validWrong: string[];
  peakRssMb: number;
  /** From /metrics after the flood. */
  reservations: number;
  capped: { pod: number; address: number; namespace: number; total: number };
  /** Pods warned that addresses past the per-pod bound were not reserved (uniqueAddresses.limit findings). */
  unarbitratedPods: number;
}

/**
 * `reviews` forged `/mutate` Pod CREATEs, each with `macs` distinct MACs, the n-th in namespace
 * `namespace(n)`, sent as fast as they are answered over `connections` keep-alive
 * connections; a valid review every 200 ms meanwhile.
 */
export async function reservationFlood(
  s: Serve,
  opts: { reviews: number; macs: number; connections: number; namespace: (n: number) => string },
): Promise<FloodResult> {
  const validIdleMs: number[] = [];
  const validWrong: string[] = [];
  // The apiserver keeps its connections open: so does the prober (its own connection).
  const probe = new https.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < 7; i++) {
    const v = await validReviewAnswered(s, probe);
    if (!v.ok) validWrong.push(`idle: ${v.detail}`);
    validIdleMs.push(v.ms);
  }
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.connections });
  const answers: Record<string, number> = {};
  let next = 0;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, s.rssMb().rss)), 100);
  const started = performance.now();
  let flooding = true;
  const validDuringMs: number[] = [];
  const forgedMs: number[] = [];
  const prober = (async () => {
    while (flooding) {
      await sleep(200);
      const v = await validReviewAnswered(s, probe);
      if (!v.ok) validWrong.push(`during: ${v.detail}`);
      validDuringMs.push(v.ms);
    }
  })();
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      while (next < opts.reviews && !s.exited()) {
        const n = next++;
        const a = await post(s, '/mutate', manyMacPod(opts.namespace(n), `forged-${n}`, n * opts.macs, opts.macs), agent);
        forgedMs.push(a.ms);
        const key = `${a.status}${a.status === 200 ? ` ${a.json?.response?.allowed}` : ''}`;
        answers[key] = (answers[key] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  flooding = false;
  await prober;
  clearInterval(sampler);
  agent.destroy();
  probe.destroy();
  peak = Math.max(peak, s.rssMb().rss);
  const metrics = s.exited() ? new Map<string, number>() : await metricValues(s);
  const cap = (name: string) => metrics.get(`netattach_address_reservations_capped_total{cap="${name}"}`) ?? Number.NaN;
  const capped = { pod: cap('pod'), address: cap('address'), namespace: cap('namespace'), total: cap('total') };
  let unarbitratedPods = 0;
  for (const [series, value] of metrics)
    if (series.startsWith('netattach_policy_findings_total{') && series.includes('rule="uniqueAddresses.limit"')) unarbitratedPods += value;
  return {
    answers,
    seconds,
    validIdleMs,
    validDuringMs,
    forgedMs,
    validWrong,
    peakRssMb: peak,
    reservations: metrics.get('netattach_address_index_entries{entry="reservations"}') ?? Number.NaN,
    capped,
    unarbitratedPods,
  };
}

export { median };

/**
 * The pile-up under a Warn rule: `pods` distinct pods in `namespace` (the Warn one), each asking
 * for the same `networks` MACs, one on each NAD mac-0.., so each MAC piles up one reservation per
 * pod; all admitted with a warning. Server CPU (ms, 10 ms ticks) per batch of `batch` pods, in order.
 */
export async function warnPileUp(
  s: Serve,
  opts: { namespace: string; pods: number; networks: number; batch: number; connections: number },
): Promise<{ cpuMsPerBatch: number[]; warned: number; unwarned: number; denied: number; failed: number; seconds: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.connections });
  const cpuMsPerBatch: number[] = [];
  let warned = 0;
  let unwarned = 0;
  let denied = 0;
  let failed = 0;
  const started = performance.now();
  for (let first = 0; first < opts.pods; first += opts.batch) {
    const cpu = serverCpuMs(s);
    let next = first;
    const end = Math.min(opts.pods, first + opts.batch);
    await Promise.all(
      Array.from({ length: opts.connections }, async () => {
        while (next < end) {
          const n = next++;
          const a = await post(
            s,
            '/mutate',
            manyMacPod(opts.namespace, `dup-${n}`, 7, opts.networks, (k) => `mac-${k}`),
            agent,
          );
          if (a.status !== 200) failed++;
          else if (a.json?.response?.allowed !== true) denied++;
          // Warnings are cut to 120 characters: the rule's name is what is left to recognise.
          else if ((a.json?.response?.warnings ?? []).some((w: string) => w.includes('(uniqueAddresses):'))) warned++;
          else unwarned++;
        }
      }),
    );
    cpuMsPerBatch.push(serverCpuMs(s) - cpu);
  }
  agent.destroy();
  return { cpuMsPerBatch, warned, unwarned, denied, failed, seconds: (performance.now() - started) / 1000 };
}
