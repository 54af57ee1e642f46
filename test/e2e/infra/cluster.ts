/**
 * A throw-away Kubernetes control plane (etcd + kube-apiserver) on 127.0.0.1
 * for the end-to-end suite. No controllers, no kubelet: pods stay Pending,
 * which is all admission tests need.
 *
 *   const cluster = await startCluster();
 *   const r = await cluster.kubectl(['get', 'ns']);
 *   await cluster.stop();
 *
 * Binaries come from build.sh (cached under $NETATTACH_E2E_CACHE), or from
 * $NETATTACH_E2E_BIN_DIR / opts.binDir when set.
 */
import { distinctFreePorts } from './ports.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import forge from 'node-forge';

/** One version for every suite (docs/e2e.md): one Kubernetes build on a cold CI machine, not two. */
export const DEFAULT_K8S_VERSION = 'v1.37.2';

export interface ClusterOptions {
  /** Directory holding kube-apiserver, kubectl, etcd. Default: ensureBinaries(). */
  binDir?: string;
  /** Kubernetes version to build/use (default $NETATTACH_K8S_VERSION or v1.37.2). */
  k8sVersion?: string;
  /** Parent directory for the cluster's temp dir (default os.tmpdir()). */
  tmpRoot?: string;
  /** Keep the work dir (certs, logs, etcd data) after stop(). Also $NETATTACH_E2E_KEEP=1. */
  keepWorkDir?: boolean;
  /** How long to wait for etcd + /readyz (default 120 s). */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags, e.g. ['--v=4']. */
  apiserverFlags?: string[];
  /**
   * `--admission-control-config-file`: an AdmissionConfiguration the caller wrote (with the files
   * it names), e.g. a webhook kubeconfig that gives the apiserver a client certificate for a webhook.
   * Read when the apiserver starts, and again by restartApiserver().
   */
  admissionControlConfigFile?: string;
  /**
   * Also run kube-scheduler and kube-controller-manager (only its resourceclaim controller), as
   * admin, for the DRA suite: pods get scheduled to a Node the test creates, templates become claims.
   */
  scheduling?: boolean;
  /** `--feature-gates` for every component started, e.g. 'DRAExtendedResource=true'. */
  featureGates?: string;
  /** Progress messages (default: to stderr when $NETATTACH_E2E_VERBOSE is set). */
  log?: (msg: string) => void;
  /** etcd's `--quota-backend-bytes` (default 1 GiB; the scale bench's 150,000 pods need more). */
  etcdQuotaBytes?: number;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** Written to kubectl's stdin (e.g. for `apply -f -`). */
  input?: string;
  /** Kill kubectl after this long (default 60 s); code is then 124. */
  timeoutMs?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

export interface Cluster {
  /** kubeconfig (context "netattach-e2e", admin token user) */
  kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  server: string;
  /** bearer token of user "admin" in group system:masters */
  token: string;
  /** PEM of the CA that signed the apiserver's serving certificate */
  caPem: string;
  binDir: string;
  workDir: string;
  logsDir: string;
  /** Runs the built kubectl against this cluster. Never throws on a non-zero exit. */
  kubectl(args: string[], opts?: KubectlOptions): Promise<KubectlResult>;
  /** Like kubectl() but throws (with stdout/stderr) when the exit code is not 0. */
  kubectlOk(args: string[], opts?: KubectlOptions): Promise<string>;
  /** Raw request to the apiserver as admin (path like /api/v1/namespaces). */
  request(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: string }>;
  /** Last `lines` lines of the etcd and apiserver logs, with their paths. */
  tailLogs(lines?: number): string;
  /** Kills kube-apiserver and etcd, removes the work dir unless kept. Idempotent. */
  stop(): Promise<void>;
  /** Stops kube-apiserver (SIGTERM, SIGKILL after `graceMs`) and starts it again on the same port; resolves once it is ready. */
  restartApiserver(graceMs?: number): Promise<void>;
  /** Sends a signal to kube-apiserver: SIGSTOP freezes it (connections hang), SIGCONT thaws it. */
  signalApiserver(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

// ------------------------------------------------------------------ binaries

const here = path.dirname(fileURLToPath(import.meta.url));
const BINARIES = ['kube-apiserver', 'kubectl', 'etcd'] as const;

function cacheRoot(): string {
  return process.env.NETATTACH_E2E_CACHE || path.join(os.homedir(), '.cache', 'netattach-e2e');
}

function haveAll(dir: string): boolean {
  return BINARIES.every((b) => existsSync(path.join(dir, b)));
}

/**
 * Returns a directory with kube-apiserver, kubectl and etcd, building them
 * with build.sh when they are not cached (minutes on a cold cache).
 */
export async function ensureBinaries(version?: string): Promise<string> {
  const explicit = process.env.NETATTACH_E2E_BIN_DIR;
  if (explicit) {
    if (!haveAll(explicit)) throw new Error(`NETATTACH_E2E_BIN_DIR=${explicit} lacks one of ${BINARIES.join(', ')}`);
    return explicit;
  }
  const v = version || process.env.NETATTACH_K8S_VERSION || DEFAULT_K8S_VERSION;
  const cached = path.join(cacheRoot(), v, 'bin');
  if (haveAll(cached)) return cached;

  const script = path.join(here, 'build.sh');
  process.stderr.write(`[e2e] building kube-apiserver/kubectl/etcd ${v} into ${cached} (first run: several minutes)\n`);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [script], {
      env: { ...process.env, NETATTACH_K8S_VERSION: v },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${script} exited with ${code}`))));
  });
  const dir = out.trim().split('\n').pop() || cached;
  if (!haveAll(dir)) throw new Error(`build.sh finished but ${dir} lacks binaries`);
  return dir;
}

// -------------------------------------------------------------- certificates

interface KeyPair {
  privatePem: string;
  publicPem: string;
}

function rsaKeyPair(): KeyPair {
  // node's crypto is far faster than forge's pure-JS key generation
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

function serial(): string {
  // positive, 16 bytes
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b.toString('hex');
}

interface Issued {
  certPem: string;
  keyPem: string;
}

/** A self-signed CA (RSA 2048, valid a week), e.g. for a test webhook's serving cert. */
export function makeCa(cn: string): Issued & { cert: forge.pki.Certificate; key: forge.pki.PrivateKey } {
  const kp = rsaKeyPair();
  const key = forge.pki.privateKeyFromPem(kp.privatePem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(kp.publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 7 * 24 * 60 * 60 * 1000);
  const attrs = [{ name: 'commonName', value: cn }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { cert, key, certPem: forge.pki.certificateToPem(cert), keyPem: kp.privatePem };
}

/** A serving certificate signed by `ca` for the given DNS names and IPs. */
export function issueServingCert(
  ca: { cert: forge.pki.Certificate; key: forge.pki.PrivateKey },
  cn: string,
  dnsNames: string[],
  ips: string[],
): Issued {
  const kp = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(kp.publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(Date.now() + 7 * 24 * 60 * 60 * 1000);
  cert.setSubject([{ name: 'commonName', value: cn }]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))],
    },
  ]);
  cert.sign(ca.key as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: kp.privatePem };
}

// --------------------------------------------------------------- processes

const live = new Set<ChildProcess>();
/** work dirs to remove if the process exits without stop() */
const disposableDirs = new Set<string>();
let exitHooksInstalled = false;

function killAllSync(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  live.clear();
  for (const dir of disposableDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* removed later by removeStaleWorkDirs */
    }
  }
  disposableDirs.clear();
}

/** Runs `fn` (synchronous) when the process exits and on SIGINT, SIGTERM or SIGHUP, then lets the signal act as it would have. */
export function onExitOrSignal(fn: () => void): void {
  process.on('exit', fn);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      fn();
      process.removeListener(sig, handler);
      // keep the default behaviour when nobody else handles the signal
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  onExitOrSignal(killAllSync);
}

let setprivOk: boolean | undefined;
/** util-linux setpriv --pdeathsig makes children die with us even on SIGKILL. */
function withPdeathsig(cmd: string, args: string[]): [string, string[]] {
  if (setprivOk === undefined) {
    const r = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' });
    setprivOk = r.status === 0;
  }
  return setprivOk ? ['setpriv', ['--pdeathsig', 'KILL', '--', cmd, ...args]] : [cmd, args];
}

/** A child process of the suite, with its log (also lib/node.ts's). */
export interface Proc {
  name: string;
  child: ChildProcess;
  logPath: string;
  exited: Promise<number | null>;
  exitCode: () => number | null | undefined;
}

function startProcess(name: string, cmd: string, args: string[], logPath: string): Proc {
  installExitHooks();
  const fd = openSync(logPath, 'a');
  const [c, a] = withPdeathsig(cmd, args);
  const child = spawn(c, a, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  live.add(child);
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (c2, sig) => {
      live.delete(child);
      code = c2 ?? (sig ? 128 : null);
      resolve(code);
    });
    child.on('error', (err) => {
      live.delete(child);
      code = 127;
      createWriteStream(logPath, { flags: 'a' }).end(`\n[e2e] failed to start ${cmd}: ${err.message}\n`);
      resolve(127);
    });
  });
  return { name, child, logPath, exited, exitCode: () => code };
}

/** SIGTERM, then SIGKILL after the grace; resolves once the process has exited. */
export async function stopProcess(p: Proc, graceMs = 10_000): Promise<void> {
  if (p.exitCode() !== undefined) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
}

/** The last lines of a log file, or why it cannot be read. */
export function tail(file: string, lines: number): string {
  try {
    const all = readFileSync(file, 'utf8').split('\n');
    return all.slice(-lines - 1).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${(e as Error).message})`;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function httpGet(url: string, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function httpsRequest(
  server: string,
  caPem: string,
  token: string,
  method: string,
  urlPath: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(urlPath, server);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = https.request(
      u,
      {
        method,
        ca: caPem,
        timeout: timeoutMs,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

function etcdSupports(etcdBin: string, flag: string): boolean {
  const r = spawnSync(etcdBin, ['--help'], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.includes(flag);
}

const WORKDIR_PREFIX = 'netattach-e2e-';
const OWNER_FILE = 'owner.pid';

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Work dirs of test processes that died without stop() (SIGKILL, crash):
 * their etcd/apiserver died with them (pdeathsig), the files stay. Removes
 * those whose owner pid is gone; dirs kept on purpose (NETATTACH_E2E_KEEP or
 * a failed start) have no owner file and are left alone.
 */
async function removeStaleWorkDirs(tmpRoot: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(tmpRoot);
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.startsWith(WORKDIR_PREFIX)) continue;
    const dir = path.join(tmpRoot, e);
    try {
      const pid = Number.parseInt(readFileSync(path.join(dir, OWNER_FILE), 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && !pidAlive(pid)) await rm(dir, { recursive: true, force: true });
    } catch {
      /* no owner file: not ours to remove */
    }
  }
}

// ------------------------------------------------------------------ cluster

/**
 * Starts etcd and kube-apiserver on free 127.0.0.1 ports and waits until the
 * apiserver is ready. Retries with new ports if a port was taken meanwhile.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const binDir = opts.binDir || (await ensureBinaries(opts.k8sVersion));
  let lastErr: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await startOnce(binDir, opts);
    } catch (e) {
      lastErr = e;
      if (!(e instanceof PortRaceError)) throw e;
      (opts.log ?? defaultLog)(`port race on attempt ${attempt}, retrying`);
    }
  }
  throw lastErr;
}

class PortRaceError extends Error {}

function defaultLog(msg: string): void {
  if (process.env.NETATTACH_E2E_VERBOSE) process.stderr.write(`[e2e] ${msg}\n`);
}

async function startOnce(binDir: string, opts: ClusterOptions): Promise<Cluster> {
  const log = opts.log ?? defaultLog;
  const t0 = Date.now();
  const timeoutMs = opts.startTimeoutMs ?? 120_000;
  const keep = opts.keepWorkDir ?? process.env.NETATTACH_E2E_KEEP === '1';
  const tmpRoot = opts.tmpRoot ?? os.tmpdir();
  await removeStaleWorkDirs(tmpRoot);
  const workDir = await mkdtemp(path.join(tmpRoot, WORKDIR_PREFIX));
  await writeFile(path.join(workDir, OWNER_FILE), `${process.pid}\n`);
  if (!keep) disposableDirs.add(workDir);
  const logsDir = path.join(workDir, 'logs');
  const pki = path.join(workDir, 'pki');
  await mkdir(logsDir, { recursive: true });
  await mkdir(pki, { recursive: true });

  // --- credentials
  const ca = makeCa('netattach-e2e-ca');
  const serving = issueServingCert(
    ca,
    'kube-apiserver',
    ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ['127.0.0.1', '10.0.0.1'],
  );
  const sa = rsaKeyPair();
  const token = randomBytes(24).toString('hex');
  const caPem = ca.certPem;
  const files = {
    caCrt: path.join(pki, 'ca.crt'),
    tlsCrt: path.join(pki, 'apiserver.crt'),
    tlsKey: path.join(pki, 'apiserver.key'),
    saKey: path.join(pki, 'sa.key'),
    saPub: path.join(pki, 'sa.pub'),
    tokens: path.join(pki, 'tokens.csv'),
  };
  await writeFile(files.caCrt, caPem);
  await writeFile(files.tlsCrt, serving.certPem + caPem);
  await writeFile(files.tlsKey, serving.keyPem, { mode: 0o600 });
  await writeFile(files.saKey, sa.privatePem, { mode: 0o600 });
  await writeFile(files.saPub, sa.publicPem);
  await writeFile(files.tokens, `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });

  const [etcdPort, peerPort, apiPort] = (await distinctFreePorts(3)) as [number, number, number];
  const server = `https://127.0.0.1:${apiPort}`;
  const procs: Proc[] = [];
  let stopped = false;

  const tailLogs = (lines = 40): string =>
    [...procs]
      .reverse()
      .map((p) => `--- ${p.name}: ${p.logPath} (last ${lines} lines)\n${tail(p.logPath, lines)}`)
      .join('\n');

  const teardown = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await stopProcess(p);
    disposableDirs.delete(workDir);
    if (!keep) await rm(workDir, { recursive: true, force: true, maxRetries: 3 });
    else await rm(path.join(workDir, OWNER_FILE), { force: true });
  };

  const fail = async (what: string, raceSuspect = false): Promise<never> => {
    const logs = tailLogs(30);
    const taken = raceSuspect && /address already in use/i.test(logs);
    for (const p of [...procs].reverse()) await stopProcess(p);
    disposableDirs.delete(workDir);
    await rm(path.join(workDir, OWNER_FILE), { force: true });
    const msg = `${what}\nwork dir kept: ${workDir}\n${logs}`;
    if (taken) {
      await rm(workDir, { recursive: true, force: true });
      throw new PortRaceError(msg);
    }
    throw new Error(msg);
  };

  // --- etcd
  const etcdBin = path.join(binDir, 'etcd');
  const etcdArgs = [
    '--name=default',
    `--data-dir=${path.join(workDir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    '--initial-cluster-state=new',
    `--quota-backend-bytes=${opts.etcdQuotaBytes ?? 1073741824}`,
  ];
  if (etcdSupports(etcdBin, '--unsafe-no-fsync')) etcdArgs.push('--unsafe-no-fsync');
  const etcd = startProcess('etcd', etcdBin, etcdArgs, path.join(logsDir, 'etcd.log'));
  procs.push(etcd);
  log(`etcd on 127.0.0.1:${etcdPort}, logs ${etcd.logPath}`);
  for (;;) {
    if (etcd.exitCode() !== undefined) await fail(`etcd exited with ${etcd.exitCode()}`, true);
    if (Date.now() - t0 > timeoutMs) await fail('etcd not healthy in time');
    try {
      const r = await httpGet(`http://127.0.0.1:${etcdPort}/health`);
      if (r.status === 200 && r.body.includes('"true"')) break;
    } catch {
      /* not yet */
    }
    await sleep(200);
  }
  log(`etcd healthy after ${Date.now() - t0} ms`);

  // --- kube-apiserver
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${path.join(workDir, 'apiserver-certs')}`,
    `--tls-cert-file=${files.tlsCrt}`,
    `--tls-private-key-file=${files.tlsKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${files.saPub}`,
    `--service-account-signing-key-file=${files.saKey}`,
    '--authorization-mode=RBAC',
    `--token-auth-file=${files.tokens}`,
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    // 127.0.0.1 is not a valid endpoint address for the "kubernetes" service
    '--endpoint-reconciler-type=none',
    '--profiling=false',
    '--v=1',
    ...(opts.featureGates ? [`--feature-gates=${opts.featureGates}`] : []),
    ...(opts.admissionControlConfigFile ? [`--admission-control-config-file=${opts.admissionControlConfigFile}`] : []),
    ...(opts.apiserverFlags ?? []),
  ];
  let api = startProcess('kube-apiserver', path.join(binDir, 'kube-apiserver'), apiArgs, path.join(logsDir, 'kube-apiserver.log'));
  procs.push(api);
  log(`kube-apiserver on ${server}, logs ${api.logPath}`);
  const waitApiReady = async (since: number): Promise<void> => {
    let lastReady = '';
    for (;;) {
      if (api.exitCode() !== undefined) await fail(`kube-apiserver exited with ${api.exitCode()}`, true);
      if (etcd.exitCode() !== undefined) await fail(`etcd exited with ${etcd.exitCode()}`);
      if (Date.now() - since > timeoutMs) await fail(`kube-apiserver not ready within ${timeoutMs} ms; last /readyz: ${lastReady}`);
      try {
        const r = await httpsRequest(server, caPem, token, 'GET', '/readyz', undefined, 3000);
        lastReady = `${r.status} ${r.body.slice(0, 2000)}`;
        if (r.status === 200) {
          // the bootstrap controller creates "default" shortly after
          const ns = await httpsRequest(server, caPem, token, 'GET', '/api/v1/namespaces/default', undefined, 3000);
          if (ns.status === 200) break;
        }
      } catch (e) {
        lastReady = (e as Error).message;
      }
      await sleep(250);
    }
  };
  await waitApiReady(t0);
  log(`kube-apiserver ready after ${Date.now() - t0} ms`);

  // --- kubeconfig (JSON is valid YAML)
  const kubeconfigPath = path.join(workDir, 'kubeconfig');
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'netattach-e2e',
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'netattach-e2e', context: { cluster: 'netattach-e2e', user: 'admin', namespace: 'default' } }],
    'current-context': 'netattach-e2e',
    preferences: {},
  };
  await writeFile(kubeconfigPath, JSON.stringify(kubeconfig, null, 2) + '\n', { mode: 0o600 });

  if (opts.scheduling) {
    const [schedPort, kcmPort] = (await distinctFreePorts(2)) as [number, number];
    const common = [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
      '--v=1',
      ...(opts.featureGates ? [`--feature-gates=${opts.featureGates}`] : []),
    ];
    const sched = startProcess(
      'kube-scheduler',
      path.join(binDir, 'kube-scheduler'),
      [...common, `--secure-port=${schedPort}`],
      path.join(logsDir, 'kube-scheduler.log'),
    );
    procs.push(sched);
    const kcm = startProcess(
      'kube-controller-manager',
      path.join(binDir, 'kube-controller-manager'),
      [...common, `--secure-port=${kcmPort}`, '--controllers=resourceclaim-controller', '--use-service-account-credentials=false'],
      path.join(logsDir, 'kube-controller-manager.log'),
    );
    procs.push(kcm);
    // Healthy when their /healthz answers (self-signed serving certificates: not verified here).
    for (const [p, port] of [
      [sched, schedPort],
      [kcm, kcmPort],
    ] as const) {
      for (;;) {
        if (p.exitCode() !== undefined) await fail(`${p.name} exited with ${p.exitCode()}`);
        if (Date.now() - t0 > timeoutMs) await fail(`${p.name} not healthy within ${timeoutMs} ms`);
        const ok = await new Promise<boolean>((resolve) => {
          const req = https.get({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 3000 }, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          });
          req.on('error', () => resolve(false));
          req.on('timeout', () => req.destroy());
        });
        if (ok) break;
        await sleep(250);
      }
      log(`${p.name} healthy after ${Date.now() - t0} ms`);
    }
  }

  const kubectlBin = path.join(binDir, 'kubectl');
  const cacheDir = path.join(workDir, 'kube-cache');
  const kubectl = (args: string[], kopts: KubectlOptions = {}): Promise<KubectlResult> =>
    new Promise((resolve) => {
      const child = spawn(kubectlBin, [`--kubeconfig=${kubeconfigPath}`, `--cache-dir=${cacheDir}`, ...args], {
        env: { ...process.env, KUBECONFIG: kubeconfigPath, ...kopts.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, kopts.timeoutMs ?? 60_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve({ code: 127, stdout, stderr: stderr + err.message });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: timedOut ? 124 : (code ?? 1), stdout, stderr: timedOut ? stderr + '\n[e2e] kubectl timed out' : stderr });
      });
      child.stdin.on('error', () => {
        /* kubectl may exit before reading stdin */
      });
      child.stdin.end(kopts.input ?? '');
    });

  const kubectlOk = async (args: string[], kopts?: KubectlOptions): Promise<string> => {
    const r = await kubectl(args, kopts);
    if (r.code !== 0) {
      throw new Error(`kubectl ${args.join(' ')} exited with ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r.stdout;
  };

  return {
    kubeconfigPath,
    server,
    token,
    caPem,
    binDir,
    workDir,
    logsDir,
    kubectl,
    kubectlOk,
    request: (method, urlPath, body) => httpsRequest(server, caPem, token, method, urlPath, body),
    tailLogs,
    restartApiserver: async (graceMs = 10_000) => {
      api.child.kill('SIGCONT');
      await stopProcess(api, graceMs);
      procs.splice(procs.indexOf(api), 1);
      api = startProcess('kube-apiserver', path.join(binDir, 'kube-apiserver'), apiArgs, path.join(logsDir, 'kube-apiserver.log'));
      procs.push(api);
      await waitApiReady(Date.now());
    },
    signalApiserver: (signal) => void api.child.kill(signal),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await teardown();
    },
  };
}
