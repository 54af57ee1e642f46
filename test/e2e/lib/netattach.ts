/**
 * netattach as a real process (`node dist/src/cli/main.js serve ...`) for the e2e suite:
 * fixed ports across restarts (the webhook configurations point at them), JSON log lines
 * kept in a file, readiness, metrics.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

export const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
/** The CLI under test: the build in dist/, or $NETATTACH_E2E_MAIN (e.g. an installed package's main.js). */
export const MAIN = process.env.NETATTACH_E2E_MAIN ? path.resolve(process.env.NETATTACH_E2E_MAIN) : path.join(REPO, 'dist/src/cli/main.js');

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

let setprivOk: boolean | undefined;
/** Children die with the test process even when it is SIGKILLed (util-linux setpriv). */
function withPdeathsig(cmd: string, args: string[]): [string, string[]] {
  setprivOk ??= spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;
  return setprivOk ? ['setpriv', ['--pdeathsig', 'KILL', '--', cmd, ...args]] : [cmd, args];
}

/** The environment without tap's loader and coverage hooks: netattach runs as it would in a pod. */
export function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(NODE_OPTIONS|NODE_V8_COVERAGE|TAP|_TAPJS|TS_NODE)/.test(k)),
  );
  return { ...env, ...extra };
}

export interface NetattachOptions {
  /** Either a kubeconfig file, or in-cluster credentials as a pod gets them (service env + token dir). */
  kubeconfig?: string;
  inCluster?: { host: string; port: string; serviceAccountDir: string };
  tlsDir: string;
  port: number;
  healthPort: number;
  logPath: string;
  extraArgs?: string[];
  /** NODE_OPTIONS for the process (e.g. the Deployment's V8 flags); none by default. */
  nodeOptions?: string;
  /** node's own arguments before the script (flags NODE_OPTIONS refuses, e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** More environment variables (e.g. the Deployment's MALLOC_ARENA_MAX). */
  env?: Record<string, string>;
  /** The CLI to run instead of MAIN (e.g. another build, for a rolling upgrade). */
  main?: string;
}

export function httpGet(url: string, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

/** Sum of a Prometheus counter/gauge over the series whose labels include `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** The production path: no kubeconfig anywhere (HOME too), only what the kubelet gives a pod. */
function credentialEnv(o: NetattachOptions): Record<string, string> {
  if (o.kubeconfig) return { KUBECONFIG: o.kubeconfig };
  if (!o.inCluster) throw new Error('netattach needs a kubeconfig or in-cluster credentials');
  return {
    KUBECONFIG: '',
    HOME: o.inCluster.serviceAccountDir,
    KUBERNETES_SERVICE_HOST: o.inCluster.host,
    KUBERNETES_SERVICE_PORT: o.inCluster.port,
    NETATTACH_SERVICEACCOUNT_DIR: o.inCluster.serviceAccountDir,
  };
}

export class Netattach {
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> = Promise.resolve(null);
  #log: WriteStream;
  starts = 0;

  constructor(readonly options: NetattachOptions) {
    this.#log = createWriteStream(options.logPath, { flags: 'a' });
  }

  get url(): string {
    return `https://127.0.0.1:${this.options.port}`;
  }
  get healthUrl(): string {
    return `http://127.0.0.1:${this.options.healthPort}`;
  }
  /** The process id while running (setpriv execs node in place, so this is netattach's). */
  get pid(): number | undefined {
    return this.running ? this.#child!.pid : undefined;
  }
  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error('netattach is already running');
    const o = this.options;
    const args = [
      ...(o.nodeArgs ?? []),
      o.main ?? MAIN,
      'serve',
      ...(o.kubeconfig ? [`--kubeconfig=${o.kubeconfig}`] : []),
      `--tls-dir=${o.tlsDir}`,
      '--host=127.0.0.1',
      `--port=${o.port}`,
      `--health-port=${o.healthPort}`,
      '--shutdown-grace=5s',
      ...(o.extraArgs ?? []),
    ];
    const [cmd, a] = withPdeathsig(process.execPath, args);
    this.starts++;
    this.#log.write(`{"e2e":"start #${this.starts}"}\n`);
    const child = spawn(cmd, a, {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: plainEnv({ ...o.env, ...credentialEnv(o), ...(o.nodeOptions ? { NODE_OPTIONS: o.nodeOptions } : {}) }),
    });
    child.stdout!.pipe(this.#log, { end: false });
    child.stderr!.pipe(this.#log, { end: false });
    live.add(child);
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.on('exit', (code, sig) => {
        live.delete(child);
        this.#log.write(`{"e2e":"exited","code":${code},"signal":${JSON.stringify(sig)}}\n`);
        resolve(code ?? 128);
      });
      child.on('error', (err) => {
        live.delete(child);
        this.#log.write(`{"e2e":"spawn failed","error":${JSON.stringify(err.message)}}\n`);
        resolve(127);
      });
    });
  }

  /** Polls /readyz until 200; throws with the last body and the log tail. */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      if (!this.running) throw new Error(`netattach exited before it was ready\n${this.tail(40)}`);
      try {
        const r = await httpGet(`${this.healthUrl}/readyz`);
        if (r.status === 200) return;
        last = `${r.status} ${r.body}`;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`netattach not ready within ${timeoutMs} ms; last /readyz: ${last}\n${this.tail(40)}`);
      await sleep(200);
    }
  }

  async metrics(): Promise<string> {
    const r = await httpGet(`${this.healthUrl}/metrics`);
    if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
    return r.body;
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return metricSum(await this.metrics(), name, labels);
  }

  /** SIGTERM (graceful drain), SIGKILL after 15 s. Resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (!this.running) return this.#exited;
    this.#child!.kill('SIGTERM');
    const timer = setTimeout(() => this.#child?.kill('SIGKILL'), 15_000);
    const code = await this.#exited;
    clearTimeout(timer);
    return code;
  }

  /** SIGKILL: a crash, no drain. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.#child!.kill('SIGKILL');
    await this.#exited;
  }

  /** Parsed JSON log lines (non-JSON lines are skipped). */
  logLines(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const line of this.readLog().split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* partial line */
      }
    }
    return out;
  }

  readLog(): string {
    try {
      return readFileSync(this.options.logPath, 'utf8');
    } catch {
      return '';
    }
  }

  tail(lines: number): string {
    const all = this.readLog().trimEnd().split('\n');
    return `--- netattach: ${this.options.logPath} (last ${lines} lines)\n${all.slice(-lines).join('\n')}`;
  }

  async close(): Promise<void> {
    await this.stop();
    await new Promise<void>((r) => this.#log.end(r));
  }
}
