/**
 * End-to-end: upgrades that fail no pod create (issue 26). Pods are created without a pause
 * (some with a unique MAC, so /validate claims it in a Lease; some reusing a created pod's MAC,
 * which must be denied; some without an address) while netattach is rolled
 *
 *   1. replica by replica to a new build,
 *   2. onto a new CA and serving certificate (the self-signed overlay's CA replacement, then its
 *      monthly renewal), and
 *   3. replica by replica to new flags.
 *
 * The rolls follow manifests/base as the Deployment controller and the kubelet would, with the
 * settings read from the rendered manifests: a new replica (maxSurge) becomes ready (startup, then
 * readiness probe) and joins the Service; only then is an old one deleted (maxUnavailable 0): it
 * leaves the Service's endpoints after a propagation lag, sleeps its preStop, gets SIGTERM, drains
 * and exits within terminationGracePeriodSeconds. The Service is infra/proxy.ts's ServiceProxy,
 * which, as kube-proxy, never retries a refused connection elsewhere.
 *
 *   npm run test:e2e            (see docs/e2e.md, "Rolling upgrades")
 */
import t, { type Test } from 'tap';
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import {
  CERT_SANS,
  SecretVolume,
  eventually,
  freePort,
  isWebhookConfig,
  kustomize,
  run,
  startE2e,
  deploymentEnv,
  type E2e,
} from './lib/env.js';
import { MAIN, Netattach, REPO, httpGet } from './lib/netattach.js';
import { namespace, nad, pod, policy, sriovConfig } from './lib/objects.js';
import { rewriteWebhookConfigs } from './infra/webhook.js';
import { ServiceProxy } from './infra/proxy.js';

type Obj = Record<string, unknown>;
const NS = 'e2e-upg';
const CLAIMS = 'netattach-claims';
/** How long kube-proxy on the API server's node takes to follow an endpoint change (assumed; see docs/e2e.md). */
const ENDPOINT_LAG_MS = Number(process.env.NETATTACH_E2E_ENDPOINT_LAG_MS ?? 2_000);
/** How far apart the kubelet refreshes the Secret volume of each replica (compressed from its sync period). */
const KUBELET_SECRET_STAGGER_MS = 1_500;
const CONCURRENT_CREATES = 4;
/** Each client's pause between creates: about 15 creates a second, so that the pods a new replica lists stay in the thousands. */
const CREATE_PAUSE_MS = 200;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// What the manifests say about a roll

interface RolloutSettings {
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  terminationGracePeriodSeconds: number;
  preStopSleepSeconds: number;
  startupPeriodSeconds: number;
  readinessPath: string;
  readinessPeriodSeconds: number;
  readinessFailureThreshold: number;
  pdbMinAvailable: number;
  /** `serve --shutdown-grace` default: the Deployment does not set it. */
  shutdownGraceSeconds: number;
}

function rolloutSettings(objects: Obj[], serveHelp: string): RolloutSettings {
  const find = (kind: string): any => {
    const o = objects.find((x) => x.kind === kind && (x.metadata as Obj | undefined)?.name === 'netattach');
    if (!o) throw new Error(`manifests/base: no ${kind} netattach`);
    return o;
  };
  const d = find('Deployment');
  const pdb = find('PodDisruptionBudget');
  const c = d.spec.template.spec.containers[0];
  const int = (what: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v))
      throw new Error(`${what}: Invalid value: ${JSON.stringify(v)}: this test models whole numbers only`);
    return v;
  };
  const grace = /--shutdown-grace DURATION[^\n]*\((\d+)s\)/.exec(serveHelp);
  if (!grace) throw new Error('netattach serve --help names no --shutdown-grace default');
  if (c.args.some((a: string) => a.startsWith('--shutdown-grace'))) throw new Error('the Deployment sets --shutdown-grace: read it here');
  return {
    replicas: int('spec.replicas', d.spec.replicas),
    maxSurge: int('spec.strategy.rollingUpdate.maxSurge', d.spec.strategy?.rollingUpdate?.maxSurge),
    maxUnavailable: int('spec.strategy.rollingUpdate.maxUnavailable', d.spec.strategy?.rollingUpdate?.maxUnavailable),
    terminationGracePeriodSeconds: int(
      'spec.template.spec.terminationGracePeriodSeconds',
      d.spec.template.spec.terminationGracePeriodSeconds,
    ),
    preStopSleepSeconds: int('containers[0].lifecycle.preStop.sleep.seconds', c.lifecycle?.preStop?.sleep?.seconds ?? 0),
    startupPeriodSeconds: int('containers[0].startupProbe.periodSeconds', c.startupProbe?.periodSeconds),
    readinessPath: c.readinessProbe.httpGet.path,
    readinessPeriodSeconds: int('containers[0].readinessProbe.periodSeconds', c.readinessProbe?.periodSeconds),
    readinessFailureThreshold: int('containers[0].readinessProbe.failureThreshold', c.readinessProbe?.failureThreshold),
    pdbMinAvailable: int('PodDisruptionBudget spec.minAvailable', pdb.spec.minAvailable),
    shutdownGraceSeconds: Number(grace[1]),
  };
}

// ---------------------------------------------------------------------------------------------
// Replicas as pods: a Secret volume each, probed like the kubelet, in the Service while ready

interface Version {
  label: string;
  main: string;
  args: string[];
}

interface Termination {
  name: string;
  /** Deleted (left the endpoint set as far as the API knows). */
  deletedAt: number;
  sigtermAt: number;
  exitedAt: number;
  exitCode: number | null;
  /** Chunks the replica sent back after it was deleted, and after SIGTERM. */
  answeredAfterDelete: number;
  answeredAfterSigterm: number;
}

class Replica {
  ready = false;
  terminating = false;
  probing = true;
  readyAt?: number;
  readonly startedAt = Date.now();
  constructor(
    readonly name: string,
    readonly version: Version,
    readonly n: Netattach,
    readonly volume: SecretVolume,
  ) {}
  get port(): number {
    return this.n.options.port;
  }
}

let e: E2e;
let proxy: ServiceProxy;
let settings: RolloutSettings;
/** The content of Secret netattach-tls as the kubelet would project it. */
let secretDir: string;
let replicaCount = 0;
/** The first change of the endpoint set after the install (the rolls'). */
let rollsFrom = 0;
const replicas: Replica[] = [];
const readinessLost: string[] = [];
const live = (): Replica[] => replicas.filter((r) => !r.terminating && r.n.running);

/** The endpoint set now, applied to the proxy after the lag (snapshots in order: the lag is constant). */
function endpointsChanged(): void {
  const ports = replicas.filter((r) => r.ready && !r.terminating).map((r) => r.port);
  setTimeout(() => proxy.setEndpoints(ports), ENDPOINT_LAG_MS).unref();
}

/** The kubelet's probes: startupProbe on /healthz, then readinessProbe (successThreshold 1). */
async function probe(r: Replica): Promise<void> {
  while (r.probing && (await httpGet(`${r.n.healthUrl}/healthz`).catch(() => ({ status: 0 }))).status !== 200) {
    await sleep(settings.startupPeriodSeconds * 1000);
  }
  let failures = 0;
  while (r.probing) {
    const res = await httpGet(`${r.n.healthUrl}${settings.readinessPath}`, 2000).catch((err: Error) => ({ status: 0, body: err.message }));
    if (res.status === 200) {
      failures = 0;
      if (!r.ready) {
        r.ready = true;
        r.readyAt ??= Date.now();
        endpointsChanged();
      }
    } else if (r.ready && !r.terminating) {
      readinessLost.push(`${r.name}: ${res.status} ${res.body.slice(0, 200)}`);
      if (++failures >= settings.readinessFailureThreshold) {
        r.ready = false;
        endpointsChanged();
      }
    }
    await sleep(settings.readinessPeriodSeconds * 1000);
  }
}

async function startReplica(version: Version): Promise<Replica> {
  const name = `netattach-${++replicaCount}`;
  const dir = path.join(e.cluster.workDir, 'replicas', name);
  await mkdir(path.join(dir, 'tls'), { recursive: true });
  const volume = new SecretVolume(path.join(dir, 'tls'));
  await volume.swapIn(secretDir);
  const base = e.netattach.options;
  const n = new Netattach({
    ...base,
    tlsDir: volume.dir,
    port: await freePort(),
    healthPort: await freePort(),
    logPath: path.join(e.cluster.logsDir, `${name}.log`),
    main: version.main,
    extraArgs: version.args,
  });
  n.start();
  const r = new Replica(name, version, n, volume);
  replicas.push(r);
  void probe(r);
  return r;
}

/** The kubelet deleting a pod: out of the endpoints, preStop sleep, SIGTERM, exit (SIGKILL at the grace period). */
async function terminate(r: Replica): Promise<Termination> {
  r.terminating = true;
  const deletedAt = Date.now();
  endpointsChanged();
  await sleep(settings.preStopSleepSeconds * 1000);
  const sigtermAt = Date.now();
  const exitCode = await r.n.stop();
  const exitedAt = Date.now();
  r.probing = false;
  const answers = proxy.answered.get(r.port) ?? [];
  return {
    name: r.name,
    deletedAt,
    sigtermAt,
    exitedAt,
    exitCode,
    answeredAfterDelete: answers.filter((a) => a > deletedAt).length,
    answeredAfterSigterm: answers.filter((a) => a > sigtermAt).length,
  };
}

/** The Deployment controller with maxSurge 1, maxUnavailable 0: one new replica ready, then one old one deleted. */
async function roll(to: Version): Promise<{ terminations: Termination[]; maxPods: number; readyAfter: string[]; ms: number }> {
  const t0 = Date.now();
  const old = live();
  const terminations: Array<Promise<Termination>> = [];
  const readyAfter: string[] = [];
  let maxPods = 0;
  for (const o of old) {
    const fresh = await startReplica(to);
    maxPods = Math.max(maxPods, live().length);
    // The Deployment waits for readiness up to its progressDeadlineSeconds (600 s); 3 minutes here.
    await eventually(
      `${fresh.name} ready`,
      async () =>
        fresh.ready ? true : !fresh.n.running ? Promise.reject(new Error(`${fresh.name} exited\n${fresh.n.tail(40)}`)) : undefined,
      180_000,
    ).catch(async (err: Error) => {
      const why = await httpGet(`${fresh.n.healthUrl}${settings.readinessPath}?verbose`).catch((e: Error) => ({
        status: 0,
        body: e.message,
      }));
      throw new Error(`${err.message}; last ${settings.readinessPath}: ${why.status} ${why.body}`);
    });
    readyAfter.push(`${fresh.name} ${fresh.readyAt! - fresh.startedAt} ms`);
    terminations.push(terminate(o));
  }
  const done = await Promise.all(terminations);
  return { terminations: done, maxPods, readyAfter, ms: Date.now() - t0 };
}

// ---------------------------------------------------------------------------------------------
// The load: pods created back to back, CONCURRENT_CREATES at a time

type Kind = 'no address' | 'unique MAC' | 'MAC of a created pod';
interface Outcome {
  k: number;
  name: string;
  kind: Kind;
  mac?: string;
  phase: string;
  status: number;
  body: string;
  at: number;
}

const load = {
  running: false,
  phase: 'steady',
  next: 0,
  outcomes: [] as Outcome[],
  createdMacs: [] as string[],
  workers: [] as Array<Promise<void>>,
};

const macOf = (k: number): string =>
  `02:00:00:${[(k >> 16) & 0xff, (k >> 8) & 0xff, k & 0xff].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

async function createOne(): Promise<void> {
  const k = load.next++;
  const name = `p-${k}`;
  const pick = k % 4;
  const reuse = pick === 3 ? load.createdMacs[load.createdMacs.length - 1] : undefined;
  const kind: Kind = pick === 0 ? 'no address' : reuse ? 'MAC of a created pod' : 'unique MAC';
  const mac = kind === 'no address' ? undefined : (reuse ?? macOf(k));
  const phase = load.phase;
  const at = Date.now();
  let r: { status: number; body: string };
  try {
    r = await e.cluster.request('POST', `/api/v1/namespaces/${NS}/pods`, pod(NS, name, [{ name: 'sriov', ...(mac ? { mac } : {}) }]));
  } catch (err) {
    r = { status: 0, body: (err as Error).message };
  }
  if (r.status === 201 && kind === 'unique MAC') load.createdMacs.push(mac!);
  load.outcomes.push({ k, name, kind, ...(mac ? { mac } : {}), phase, status: r.status, body: r.body, at });
}

function startLoad(): void {
  load.running = true;
  load.workers = Array.from({ length: CONCURRENT_CREATES }, async () => {
    while (load.running) {
      await createOne();
      await sleep(CREATE_PAUSE_MS);
    }
  });
}

/** What became of a phase's creates; `failed` are those neither created, nor denied as duplicates, nor refused by the API server itself. */
function judge(phase: string) {
  const mine = load.outcomes.filter((o) => o.phase === phase);
  const created = mine.filter((o) => o.status === 201);
  const duplicateDenied = mine.filter(
    (o) => o.kind === 'MAC of a created pod' && o.status === 403 && /MAC [0-9a-f:]+ is already used by pod e2e-upg\/p-\d+/i.test(o.body),
  );
  // A refusal that names no webhook came from the API server (or its storage) before or after
  // admission: its own 429 or timeout, a connection the test client could not make.
  const apiserverRefused = mine.filter((o) => o.status !== 201 && !duplicateDenied.includes(o) && !/webhook|netattach/i.test(o.body));
  const failed = mine.filter((o) => o.status !== 201 && !duplicateDenied.includes(o) && !apiserverRefused.includes(o));
  return { mine, created, duplicateDenied, apiserverRefused, failed };
}

function reportPhase(t: Test, phase: string, rolled?: Awaited<ReturnType<typeof roll>>): void {
  const j = judge(phase);
  const count = (k: Kind): string => `${j.mine.filter((o) => o.kind === k).length} ${k}`;
  t.comment(
    `${phase}: ${j.mine.length} creates (${count('no address')}, ${count('unique MAC')}, ${count('MAC of a created pod')}): ${j.created.length} created, ${j.duplicateDenied.length} denied as duplicates, ${j.apiserverRefused.length} refused by the API server itself, ${j.failed.length} failed`,
  );
  for (const o of j.apiserverRefused) t.comment(`  refused by the API server: ${o.name} ${o.status} ${o.body.slice(0, 300)}`);
  if (rolled) {
    t.comment(
      `  roll: ${rolled.ms} ms, at most ${rolled.maxPods} replicas running; new replicas ready after ${rolled.readyAfter.join(', ')}`,
    );
    for (const x of rolled.terminations) {
      t.comment(
        `  ${x.name}: SIGTERM ${x.sigtermAt - x.deletedAt} ms after deletion, exited ${x.exitedAt - x.sigtermAt} ms after SIGTERM (code ${x.exitCode}); answered ${x.answeredAfterDelete} chunks after deletion, ${x.answeredAfterSigterm} after SIGTERM`,
      );
    }
  }
  t.same(
    j.failed.map((o) => `${o.name} (${o.kind}): ${o.status} ${o.body.slice(0, 500)}`),
    [],
    'no create failed because of netattach',
  );
  t.ok(j.created.length >= 10, `creates went through during the ${phase} (${j.created.length})`);
  t.equal(
    j.mine.filter((o) => o.kind === 'MAC of a created pod' && o.status === 201).length,
    0,
    "no create reusing a created pod's MAC was admitted",
  );
  if (rolled) {
    for (const x of rolled.terminations) {
      t.equal(x.exitCode, 0, `${x.name} drained and exited 0 after SIGTERM`);
      t.ok(
        x.exitedAt - x.deletedAt <= settings.terminationGracePeriodSeconds * 1000,
        `${x.name} gone ${x.exitedAt - x.deletedAt} ms after deletion, within terminationGracePeriodSeconds`,
      );
    }
    t.ok(rolled.maxPods <= settings.replicas + settings.maxSurge, `never more than replicas + maxSurge running (${rolled.maxPods})`);
  }
}

/** Claim Leases: address and holder. */
async function claims(): Promise<Array<{ address: string; holder: string }>> {
  const r = await e.cluster.request(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${CLAIMS}/leases?labelSelector=netattach.io%2Faddress-claim%3Dtrue`,
  );
  const items = (JSON.parse(r.body) as { items: Array<{ metadata: { annotations: Record<string, string> } }> }).items;
  return items.map((i) => ({
    address: i.metadata.annotations['netattach.io/address']!.toLowerCase(),
    holder: i.metadata.annotations['netattach.io/holder']!,
  }));
}

/** The certificate a replica presents to a new connection. */
function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' }, () => {
      const serial = s.getPeerX509Certificate()?.serialNumber ?? '';
      s.end();
      resolve(serial);
    });
    s.on('error', reject);
  });
}

/** The command line a replica runs (setpriv execs node in place). */
const cmdline = (r: Replica): string => readFileSync(`/proc/${r.n.pid}/cmdline`, 'utf8').split('\0').join(' ');

// ---------------------------------------------------------------------------------------------

let v1: Version;
let v2: Version;

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  const help = await run(process.execPath, [MAIN, 'serve', '--help']);
  settings = rolloutSettings(e.base, help.stdout);
  t.comment(`manifests/base: ${JSON.stringify(settings)}; endpoint lag modelled: ${ENDPOINT_LAG_MS} ms`);
  // The replicas run as the Deployment asks: its V8 and malloc settings, serve's default grace.
  const env = e.netattach.options.env ?? {};
  const nodeOptions = deploymentEnv(e.base, 'NODE_OPTIONS');
  const arena = deploymentEnv(e.base, 'MALLOC_ARENA_MAX');
  Object.assign(e.netattach.options, {
    env: { ...env, ...(arena ? { MALLOC_ARENA_MAX: arena } : {}) },
    ...(nodeOptions ? { nodeOptions } : {}),
  });
  // Claims whose pod never came are swept after 5 s (default 35 s), so that the claim check settles.
  const common = [`--shutdown-grace=${settings.shutdownGraceSeconds}s`, '--claim-pending=5s'];
  v1 = { label: 'this build (dist/)', main: MAIN, args: common };
  // The new build: this source's build installed as another package version at another path,
  // the way an image upgrade replaces the files (netattach reports no version of its own).
  const root = path.resolve(path.dirname(MAIN), '../../..');
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const next = `${pkg.version}-upgrade.e2e`;
  const v2root = path.join(e.cluster.workDir, `netattach-${next}`);
  await cp(path.join(root, 'dist/src'), path.join(v2root, 'dist/src'), { recursive: true });
  await cp(path.join(root, 'schemas'), path.join(v2root, 'schemas'), { recursive: true });
  await writeFile(path.join(v2root, 'package.json'), JSON.stringify({ ...pkg, version: next }, null, 2));
  await symlink(path.join(REPO, 'node_modules'), path.join(v2root, 'node_modules'));
  v2 = { label: `netattach ${next}`, main: path.join(v2root, 'dist/src/cli/main.js'), args: common };

  // The replicas get their own Secret volumes: the harness's single netattach gives way.
  await e.netattach.stop();
  secretDir = path.join(e.tlsDir, '..data');
  proxy = new ServiceProxy([]);
  const proxyPort = await proxy.start();
  for (let i = 0; i < settings.replicas; i++) await startReplica(v1);
  await eventually(
    'the first replicas ready and in the Service',
    async () => (proxy.current.length === settings.replicas ? true : undefined),
    60_000,
  );
  await e.applyOk(rewriteWebhookConfigs(e.base.filter(isWebhookConfig), `https://127.0.0.1:${proxyPort}`, e.caPem) as unknown as Obj[], [
    '--force-conflicts',
  ]);
  await e.applyOk([
    namespace(NS),
    nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov') }),
    policy('e2e-upg-macs', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { uniqueAddresses: { mac: 'Network' } },
    }),
  ]);
  for (const r of live()) {
    await eventually(`policy in force in ${r.name}`, async () =>
      (await r.n.metric('netattach_policies_loaded', { source: 'cluster' })) >= 1 ? true : undefined,
    );
  }
  const warm = await e.cluster.request('POST', `/api/v1/namespaces/${NS}/pods`, pod(NS, 'warm', [{ name: 'sriov' }]));
  if (warm.status !== 201) throw new Error(`warm-up pod: ${warm.status} ${warm.body}`);
  rollsFrom = proxy.history.length;
  startLoad();
  await sleep(3_000);
  t.comment(`${settings.replicas} replicas of ${v1.label} behind the Service at 127.0.0.1:${proxyPort}; load running`);
});

t.teardown(async () => {
  load.running = false;
  await Promise.all(load.workers);
  if (e && !t.passing())
    process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(60)}\n${replicas.map((r) => r.n.tail(60)).join('\n')}\n`);
  for (const r of replicas) {
    r.probing = false;
    await r.n.close();
  }
  await proxy?.stop();
  await e?.stop();
});

t.test('rolled replica by replica to a new build while pods are created: no create fails', async (t) => {
  load.phase = 'build roll';
  const rolled = await roll(v2);
  await sleep(2_000);
  reportPhase(t, 'build roll', rolled);
  t.ok(
    live().every((r) => cmdline(r).includes(v2.main)),
    `the replicas run ${v2.label}`,
  );
  t.equal(live().length, settings.replicas);
});

t.test('a new CA and serving certificate, then the monthly renewal, while pods are created: no create fails', async (t) => {
  load.phase = 'certificate change';
  // The self-signed overlay's steps (publish-certs.sh fetch-ca, netattach certs, publish) as its
  // ServiceAccount. There is no Secret netattach-ca yet: the first run makes a new CA, as
  // deploy.md's CA replacement does; the second is the monthly renewal with that CA.
  const overlay = await kustomize(e.cluster, 'manifests');
  await e.applyOk(overlay.filter((o) => (o.metadata as Obj).name === 'netattach-certs' && o.kind !== 'Job' && o.kind !== 'CronJob'));
  const work = path.join(e.cluster.workDir, 'upgrade-certs');
  const env = {
    KUBECONFIG: await e.kubeconfigFor('netattach-system', 'netattach-certs'),
    PATH: `${e.cluster.binDir}:${process.env.PATH ?? ''}`,
    HOME: work,
  };
  const script = path.join(REPO, 'manifests/overlays/self-signed/publish-certs.sh');
  const bundle = async (): Promise<string[]> => {
    const v = await e.getJson<{ webhooks: Array<{ clientConfig: { caBundle: string } }> }>(['validatingwebhookconfiguration', 'netattach']);
    return (
      Buffer.from(v.webhooks[0]!.clientConfig.caBundle, 'base64')
        .toString()
        .match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []
    );
  };
  const job = async (name: string): Promise<{ serial: string; ca: string }> => {
    const t0 = Date.now();
    const dir = path.join(work, name);
    await mkdir(dir, { recursive: true });
    for (const [cmd, args] of [
      ['bash', [script, 'fetch-ca', dir]],
      [
        process.execPath,
        [MAIN, 'certs', '--out', dir, '--force', '--service', 'netattach', '--namespace', 'netattach-system', ...CERT_SANS],
      ],
      ['bash', [script, 'publish', dir]],
    ] as Array<[string, string[]]>) {
      const r = await run(cmd, args, { env });
      if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.code}\n${r.stdout}${r.stderr}`);
    }
    // The kubelet projects Secret netattach-tls into each replica's volume, each at its own time.
    const secret = await e.getJson<{ data: Record<string, string> }>(['secret', '-n', 'netattach-system', 'netattach-tls']);
    secretDir = path.join(work, `${name}-secret`);
    await mkdir(secretDir, { recursive: true });
    for (const f of ['tls.crt', 'tls.key', 'ca.crt']) await writeFile(path.join(secretDir, f), Buffer.from(secret.data[f]!, 'base64'));
    const serial = new X509Certificate(await readFile(path.join(secretDir, 'tls.crt'))).serialNumber;
    const published = Date.now();
    const targets = live();
    for (const r of targets) {
      await sleep(KUBELET_SECRET_STAGGER_MS);
      await r.volume.swapIn(secretDir);
    }
    for (const r of targets)
      await eventually(`${r.name} serves ${serial}`, async () => ((await servedSerial(r.port)) === serial ? true : undefined), 30_000);
    t.comment(
      `${name}: the overlay's steps took ${published - t0} ms; every replica served the new certificate ${Date.now() - published} ms later (volumes updated ${KUBELET_SECRET_STAGGER_MS} ms apart)`,
    );
    return { serial, ca: await readFile(path.join(secretDir, 'ca.crt'), 'utf8') };
  };
  const before = await Promise.all(live().map((r) => servedSerial(r.port)));
  const replaced = await job('new-ca');
  const during = await bundle();
  t.equal(during.length, 2, 'during the CA change caBundle holds two CAs');
  t.equal(during[0]!.trim(), replaced.ca.trim(), 'the new CA first');
  t.equal(during[1]!.trim(), e.caPem.trim(), 'and the CA of the certificates still mounted');
  t.notOk(before.includes(replaced.serial), 'a new serving certificate');
  await sleep(2_000);
  const renewed = await job('renewal');
  const after = await bundle();
  t.same(
    after.map((c) => c.trim()),
    [replaced.ca.trim()],
    'after the renewal caBundle holds the new CA alone',
  );
  t.not(renewed.serial, replaced.serial, 'renewed: another certificate');
  await sleep(2_000);
  reportPhase(t, 'certificate change');
});

t.test('rolled replica by replica to new flags while pods are created: no create fails', async (t) => {
  load.phase = 'flag roll';
  const flags = ['--audit-rate=200', '--claim-pending=8s'];
  const rolled = await roll({ ...v2, label: `${v2.label} ${flags.join(' ')}`, args: [...v2.args, ...flags] });
  await sleep(2_000);
  reportPhase(t, 'flag roll', rolled);
  t.ok(
    live().every((r) => flags.every((f) => cmdline(r).includes(f))),
    `the replicas run with ${flags.join(' ')}`,
  );
});

t.test(
  "through the three rolls: every created pod's MAC claimed exactly once, no MAC admitted twice, the Service never empty",
  async (t) => {
    load.running = false;
    await Promise.all(load.workers);
    const all = load.outcomes;
    const createdWithMac = new Map(all.filter((o) => o.status === 201 && o.mac).map((o) => [`${NS}/${o.name}`, o.mac!]));
    // Claims of creates refused after their claim are swept once the pending bound has passed.
    const settled = await eventually(
      'one claim per created pod with a MAC, and none other',
      async () => {
        const held = (await claims()).filter((c) => c.holder.startsWith(`${NS}/p-`));
        return held.length === createdWithMac.size && held.every((c) => createdWithMac.has(c.holder)) ? held : undefined;
      },
      60_000,
    ).catch(async (err: Error) => {
      const held = (await claims()).filter((c) => c.holder.startsWith(`${NS}/p-`));
      t.comment(
        `claims: ${held.length}, created pods with a MAC: ${createdWithMac.size}; missing ${[...createdWithMac.keys()]
          .filter((h) => !held.some((c) => c.holder === h))
          .slice(0, 10)
          .join(' ')}; extra ${held
          .filter((c) => !createdWithMac.has(c.holder))
          .slice(0, 10)
          .map((c) => c.holder)
          .join(' ')}`,
      );
      throw err;
    });
    t.equal(new Set(settled.map((c) => c.address)).size, settled.length, 'no address claimed twice');
    t.ok(
      settled.every((c) => c.address === createdWithMac.get(c.holder)),
      "each claim holds its pod's own MAC",
    );
    // What the API server stored: one pod per MAC, exactly the pods answered 201.
    const stored = JSON.parse((await e.cluster.request('GET', `/api/v1/namespaces/${NS}/pods`)).body) as {
      items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }>;
    };
    const byMac = new Map<string, string[]>();
    for (const p of stored.items) {
      const nets = JSON.parse(p.metadata.annotations?.['k8s.v1.cni.cncf.io/networks'] ?? '[]') as Array<{ mac?: string }>;
      for (const n of nets) if (n.mac) byMac.set(n.mac, [...(byMac.get(n.mac) ?? []), p.metadata.name]);
    }
    t.same(
      [...byMac].filter(([, pods]) => pods.length > 1),
      [],
      'no two stored pods with one MAC',
    );
    t.same(
      stored.items
        .map((p) => p.metadata.name)
        .filter((n) => n.startsWith('p-'))
        .sort(),
      all
        .filter((o) => o.status === 201)
        .map((o) => o.name)
        .sort(),
      'the API server stored exactly the pods answered 201',
    );
    const sizes = proxy.history.slice(rollsFrom).map((h) => h.endpoints.length);
    t.comment(
      `${all.length} creates in all (${all.filter((o) => o.status === 201).length} created, ${settled.length} MAC claims); endpoint set sizes during the rolls: ${Math.min(...sizes)}-${Math.max(...sizes)} over ${sizes.length} changes`,
    );
    t.ok(
      Math.min(...sizes) >= settings.replicas - settings.maxUnavailable,
      `the Service never had fewer than replicas - maxUnavailable endpoints (${Math.min(...sizes)})`,
    );
    t.same(proxy.rejected, [], 'no connection found the Service empty');
    t.same(proxy.refused, [], 'no connection was sent to a replica that no longer listened (preStop outlasts the endpoint lag)');
    t.same(readinessLost, [], 'no ready replica failed a readiness probe');
    t.ok(
      settings.preStopSleepSeconds * 1000 > ENDPOINT_LAG_MS,
      `preStop (${settings.preStopSleepSeconds} s) outlasts the endpoint lag modelled (${ENDPOINT_LAG_MS} ms)`,
    );
    t.ok(
      settings.preStopSleepSeconds + settings.shutdownGraceSeconds <= settings.terminationGracePeriodSeconds,
      `preStop + shutdown grace (${settings.preStopSleepSeconds} + ${settings.shutdownGraceSeconds} s) fit terminationGracePeriodSeconds (${settings.terminationGracePeriodSeconds} s)`,
    );
    t.ok(settings.pdbMinAvailable <= settings.replicas - settings.maxUnavailable, 'the PDB does not block what a roll leaves available');
  },
);
