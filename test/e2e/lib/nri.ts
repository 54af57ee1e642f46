/**
 * network-resources-injector (NRI) as a real process for the oracle test: the binary from
 * infra/build-nri.sh, serving HTTPS with its own certificate flags, reading NADs from the e2e
 * apiserver with in-cluster credentials laid out under its working directory (build-nri.sh
 * relocates client-go's service-account path to var/run/... relative to it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { REPO, plainEnv } from './netattach.js';
import { freePort } from '../infra/ports.js';
import type { E2e } from './env.js';

export interface NriOptions {
  bin: string;
  /** Working directory: var/run/secrets/kubernetes.io/serviceaccount/ is written here. */
  workDir: string;
  apiserver: { host: string; port: string; token: string; caPem: string };
  certFile: string;
  keyFile: string;
  port: number;
  healthPort: number;
  logPath: string;
  /** Namespace of its nri-control-switches ConfigMap. */
  namespace?: string;
  extraArgs?: string[];
}

/**
 * How an e2e suite runs NRI beside its netattach: a working directory under the cluster's, the
 * cluster's apiserver and admin token, netattach's serving certificate, fresh ports, the log with
 * the cluster's logs (all but `bin`).
 */
export async function nriOptionsFor(e: E2e): Promise<Omit<NriOptions, 'bin'>> {
  const workDir = path.join(e.cluster.workDir, 'nri');
  await mkdir(workDir, { recursive: true });
  const api = new URL(e.cluster.server);
  return {
    workDir,
    apiserver: { host: api.hostname, port: api.port, token: e.cluster.token, caPem: e.cluster.caPem },
    certFile: path.join(e.tlsDir, 'tls.crt'),
    keyFile: path.join(e.tlsDir, 'tls.key'),
    port: await freePort(),
    healthPort: await freePort(),
    logPath: path.join(e.cluster.logsDir, 'nri.log'),
  };
}

/** The NRI binary: $NETATTACH_E2E_NRI_BIN, else infra/build-nri.sh (instant when cached). */
export async function nriBinary(): Promise<string> {
  if (process.env.NETATTACH_E2E_NRI_BIN) return process.env.NETATTACH_E2E_NRI_BIN;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(REPO, 'test/e2e/infra/build-nri.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`build-nri.sh exited with ${code}`)),
    );
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The AdmissionReview the apiserver sends a mutating webhook for a CREATE of `object` (a defaulted pod) by an admin. */
export function createReview(object: Record<string, any>): Record<string, unknown> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${object.metadata.name}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      operation: 'CREATE',
      userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** POSTs `body` as JSON over HTTPS (any certificate: the test reads answers, it does not judge TLS). */
export function postJson(url: string, body: unknown, timeoutMs = 10_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = https.request(
      url,
      {
        method: 'POST',
        rejectUnauthorized: false,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url}: timeout`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export class Nri {
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> = Promise.resolve(null);
  #log: WriteStream;

  constructor(readonly options: NriOptions) {
    this.#log = createWriteStream(options.logPath, { flags: 'a' });
  }

  get url(): string {
    return `https://127.0.0.1:${this.options.port}`;
  }

  /** The process's pid while it runs (benches read its CPU from /proc). */
  get pid(): number | undefined {
    return this.running ? this.#child!.pid : undefined;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  async start(): Promise<void> {
    const o = this.options;
    const sa = path.join(o.workDir, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(path.join(sa, 'token'), o.apiserver.token, { mode: 0o600 });
    await writeFile(path.join(sa, 'ca.crt'), o.apiserver.caPem);
    const args = [
      '-logtostderr',
      '-bind-address=127.0.0.1',
      `-port=${o.port}`,
      `-health-check-port=${o.healthPort}`,
      `-tls-cert-file=${o.certFile}`,
      `-tls-private-key-file=${o.keyFile}`,
      // no client certificate: the test calls it directly (netattach's default too)
      '-insecure',
      ...(o.extraArgs ?? []),
    ];
    const pdeath = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;
    const [cmd, a] = pdeath ? ['setpriv', ['--pdeathsig', 'KILL', '--', o.bin, ...args]] : [o.bin, args];
    const child = spawn(cmd, a, {
      cwd: o.workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: plainEnv({
        KUBERNETES_SERVICE_HOST: o.apiserver.host,
        KUBERNETES_SERVICE_PORT: o.apiserver.port,
        NAMESPACE: o.namespace ?? 'kube-system',
      }),
    });
    child.stdout!.pipe(this.#log, { end: false });
    child.stderr!.pipe(this.#log, { end: false });
    process.on('exit', () => child.kill('SIGKILL'));
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.on('exit', (code) => resolve(code ?? 128));
      child.on('error', () => resolve(127));
    });
  }

  /** Ready when /mutate answers a review of a pod without networks (its HTTPS server starts last). */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    const probe = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'ready',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: 'default',
        operation: 'CREATE',
        userInfo: {},
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ready' }, spec: { containers: [] } },
      },
    };
    for (;;) {
      if (!this.running) throw new Error(`NRI exited before it was ready\n${this.tail(40)}`);
      try {
        const r = await postJson(`${this.url}/mutate`, probe, 3000);
        if (r.status === 200) return;
        last = `${r.status} ${r.body}`;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`NRI not ready within ${timeoutMs} ms; last: ${last}\n${this.tail(40)}`);
      await sleep(200);
    }
  }

  tail(lines: number): string {
    let text = '';
    try {
      text = readFileSync(this.options.logPath, 'utf8');
    } catch {
      /* not written yet */
    }
    return `--- NRI: ${this.options.logPath} (last ${lines} lines)\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`;
  }

  async stop(): Promise<void> {
    if (this.running) {
      this.#child!.kill('SIGTERM');
      const timer = setTimeout(() => this.#child?.kill('SIGKILL'), 5000);
      await this.#exited;
      clearTimeout(timer);
    }
    await new Promise<void>((r) => this.#log.end(r));
  }
}
