/**
 * The e2e environment: a real kube-apiserver (infra/cluster.ts), the NAD CRD, netattach's own
 * manifests (kustomize base) applied server-side, netattach running as a process under its
 * ServiceAccount's token, and the webhook configurations from the manifests pointed at it.
 */
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { freePort } from '../infra/ports.js';
import { startCluster, type Cluster, type ClusterOptions, type KubectlResult } from '../infra/cluster.js';
import { applyWebhookConfigs, parseManifests, rewriteWebhookConfigs, type WebhookConfig } from '../infra/webhook.js';
import { MAIN, Netattach, REPO, plainEnv, type NetattachOptions } from './netattach.js';
import { macvlanConfig, namespace, nad } from './objects.js';

type Obj = Record<string, unknown>;

export const FIELD_MANAGER = 'netattach-e2e';
export const CANARY_NS = 'e2e-canary';

export interface E2e {
  cluster: Cluster;
  netattach: Netattach;
  /** Namespace/CRD/RBAC/... of manifests/base, as rendered by `kubectl kustomize`. */
  base: Obj[];
  /** Output of the server-side apply of the base (minus webhook configurations). */
  baseApply: KubectlResult;
  webhooks: WebhookConfig[];
  /** Token-based kubeconfig of ServiceAccount netattach-system/netattach (what netattach uses). */
  saKubeconfig: string;
  /** Secret-volume style directory netattach reads (tls.crt -> ..data/tls.crt). */
  tlsDir: string;
  /** The CA of the first serving certificate. */
  caPem: string;
  /** kubectl apply --server-side --validate=strict of objects (JSON documents). */
  apply(objs: Obj | Obj[], extra?: string[]): Promise<KubectlResult>;
  /** Like apply, throws unless exit code 0. */
  applyOk(objs: Obj | Obj[], extra?: string[]): Promise<string>;
  getJson<T = Obj>(args: string[]): Promise<T>;
  /** A new serving certificate (new key, same CA) swapped in like the kubelet updates a Secret volume. Returns its serial. */
  rotateCertificate(): Promise<string>;
  /** Puts DIR's tls.crt, tls.key, ca.crt (and ca.key) in service the same way. Returns the serial. */
  installCertificates(dir: string): Promise<string>;
  /** A kubeconfig with a token of ServiceAccount ns/name. */
  kubeconfigFor(ns: string, name: string): Promise<string>;
  /** Serial of the certificate netattach presents to a new TLS connection. */
  servedSerial(): Promise<string>;
  /** Log tails of netattach, kube-apiserver and etcd. */
  tails(lines?: number): string;
  stop(): Promise<void>;
}

/** Polling for eventual state: one helper for every suite. */
export { eventually } from './netattach.js';

export function toDocs(objs: Obj | Obj[]): string {
  return (Array.isArray(objs) ? objs : [objs]).map((o) => JSON.stringify(o)).join('\n---\n');
}

export { freePort };

export function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? REPO, stdio: ['ignore', 'pipe', 'pipe'], env: plainEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (e) => resolve({ code: 127, stdout, stderr: stderr + e.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

async function runOk(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `kubectl kustomize DIR` with the built kubectl. */
export async function kustomize(cluster: Cluster, dir: string): Promise<Obj[]> {
  return parseManifests(await cluster.kubectlOk(['kustomize', path.join(REPO, dir)]));
}

/** A literal `value` of the netattach Deployment's container environment in the rendered manifests. */
export function deploymentEnv(objects: Obj[], name: string): string | undefined {
  const deployment = objects.find((o) => o.kind === 'Deployment' && (o.metadata as Obj | undefined)?.name === 'netattach') as any;
  const env = (deployment?.spec?.template?.spec?.containers?.[0]?.env ?? []) as Array<{ name: string; value?: string }>;
  return env.find((e) => e.name === name)?.value;
}

export const isWebhookConfig = (o: Obj): boolean =>
  o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration';

/** Retries a kubectl call while a fresh CRD is not yet in discovery. */
async function untilServed(cluster: Cluster, args: string[]): Promise<void> {
  let last = '';
  for (let i = 0; i < 60; i++) {
    const r = await cluster.kubectl(args);
    if (r.code === 0) return;
    last = r.stderr;
    await sleep(500);
  }
  throw new Error(`kubectl ${args.join(' ')} kept failing: ${last}`);
}

/** SANs of every serving certificate: the apiserver dials https://127.0.0.1:PORT. */
export const CERT_SANS = ['--san', '127.0.0.1', '--san', 'localhost'];

/**
 * A directory updated the way the kubelet updates a Secret volume: files are links into
 * `..data`, a link to a generation directory, replaced atomically by a rename.
 */
export class SecretVolume {
  #generation = 0;
  constructor(readonly dir: string) {}

  async swapIn(src: string): Promise<string> {
    this.#generation++;
    const gen = `..gen${this.#generation}`;
    await mkdir(path.join(this.dir, gen));
    for (const f of ['tls.crt', 'tls.key', 'ca.crt', 'ca.key']) {
      await copyFile(path.join(src, f), path.join(this.dir, gen, f)).catch((err: NodeJS.ErrnoException) => {
        if (!(f === 'ca.key' && err.code === 'ENOENT')) throw err;
      });
    }
    const tmpLink = path.join(this.dir, '..data_tmp');
    await symlink(gen, tmpLink);
    await rename(tmpLink, path.join(this.dir, '..data'));
    if (this.#generation === 1) {
      for (const f of ['tls.crt', 'tls.key', 'ca.crt']) await symlink(path.join('..data', f), path.join(this.dir, f));
    }
    return new X509Certificate(await readFile(path.join(this.dir, gen, 'tls.crt'))).serialNumber;
  }

  /** `netattach certs --force` with the CA in service (as the monthly CronJob does), swapped in. */
  async renew(): Promise<string> {
    const work = path.join(this.dir, '..', `renew-${this.#generation + 1}`);
    await mkdir(work, { recursive: true });
    for (const f of ['ca.crt', 'ca.key']) await copyFile(path.join(this.dir, '..data', f), path.join(work, f));
    await runOk(process.execPath, [MAIN, 'certs', '--out', work, '--force', ...CERT_SANS]);
    return this.swapIn(work);
  }
}

/** Writes a kubeconfig holding a fresh token of ServiceAccount ns/name. */
async function serviceAccountKubeconfig(cluster: Cluster, ns: string, name: string, work: string): Promise<string> {
  const token = (await cluster.kubectlOk(['create', 'token', name, '-n', ns, '--duration=12h'])).trim();
  const file = path.join(work, `kubeconfig-${ns}-${name}`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'e2e', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64') } },
      ],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: name } }],
      'current-context': 'e2e',
    }),
    { mode: 0o600 },
  );
  return file;
}

export async function startE2e(
  log: (m: string) => void,
  clusterOptions: Omit<ClusterOptions, 'log'> = {},
  netattachOptions: Pick<NetattachOptions, 'nodeOptions' | 'nodeArgs' | 'extraArgs' | 'env'> &
    Partial<Pick<NetattachOptions, 'port' | 'healthPort'>> = {},
): Promise<E2e> {
  const cluster = await startCluster({ log, ...clusterOptions });
  let netattach: Netattach | undefined;
  try {
    const work = path.join(cluster.workDir, 'netattach');
    await mkdir(work, { recursive: true });

    const apply = (objs: Obj | Obj[], extra: string[] = []): Promise<KubectlResult> =>
      cluster.kubectl(['apply', '--server-side', '--validate=strict', `--field-manager=${FIELD_MANAGER}`, ...extra, '-f', '-'], {
        input: toDocs(objs),
      });
    const applyOk = async (objs: Obj | Obj[], extra: string[] = []): Promise<string> => {
      const r = await apply(objs, extra);
      if (r.code !== 0) throw new Error(`kubectl apply exited with ${r.code}\n${r.stdout}\n${r.stderr}`);
      return r.stdout;
    };
    const getJson = async <T>(args: string[]): Promise<T> => JSON.parse(await cluster.kubectlOk(['get', ...args, '-o', 'json'])) as T;

    // 1. What Multus would have installed: the NAD CRD.
    const nadCrd = parseManifests(await readFile(path.join(REPO, 'test/e2e/fixtures/nad-crd.yaml'), 'utf8'));
    await applyOk(nadCrd);

    // 2. The install: manifests/base, webhook configurations last (they need netattach running).
    const base = await kustomize(cluster, 'manifests/base');
    const baseApply = await apply(base.filter((o) => !isWebhookConfig(o)));
    if (baseApply.code !== 0) throw new Error(`applying manifests/base failed\n${baseApply.stdout}\n${baseApply.stderr}`);
    await cluster.kubectlOk([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/network-attachment-definitions.k8s.cni.cncf.io',
      'crd/networkattachmentpolicies.netattach.io',
    ]);
    await untilServed(cluster, ['get', 'network-attachment-definitions.k8s.cni.cncf.io', '-A']);
    await untilServed(cluster, ['get', 'networkattachmentpolicies.netattach.io']);

    // 3. netattach's credentials: a token of its ServiceAccount, so the manifests' RBAC is what it has.
    const saKubeconfig = await serviceAccountKubeconfig(cluster, 'netattach-system', 'netattach', work);

    // 4. Serving certificate from `netattach certs`, laid out like a mounted Secret.
    const tlsDir = path.join(work, 'tls');
    await mkdir(tlsDir, { recursive: true });
    const certs = new SecretVolume(tlsDir);
    const first = path.join(work, 'first-certs');
    await runOk(process.execPath, [MAIN, 'certs', '--out', first, ...CERT_SANS]);
    await certs.swapIn(first);
    const caPem = await readFile(path.join(tlsDir, 'ca.crt'), 'utf8');

    // 5. netattach itself.
    //    Ports may be chosen beforehand (an apiserver configured with the webhook's host:port).
    const [port, healthPort] = [netattachOptions.port ?? (await freePort()), netattachOptions.healthPort ?? (await freePort())];
    //    In-cluster credentials, as the kubelet mounts them: a token of its ServiceAccount and the
    //    apiserver's CA in a directory, the service address in KUBERNETES_SERVICE_HOST/PORT.
    const serviceAccountDir = path.join(work, 'serviceaccount');
    await mkdir(serviceAccountDir, { recursive: true });
    await writeFile(
      path.join(serviceAccountDir, 'token'),
      (await cluster.kubectlOk(['create', 'token', 'netattach', '-n', 'netattach-system', '--duration=12h'])).trim(),
      { mode: 0o600 },
    );
    await writeFile(path.join(serviceAccountDir, 'ca.crt'), cluster.caPem);
    // The kubelet mounts the pod's namespace too: netattach claims unique addresses there (Leases).
    await writeFile(path.join(serviceAccountDir, 'namespace'), 'netattach-system');
    const api = new URL(cluster.server);
    const inCluster = { host: api.hostname, port: api.port, serviceAccountDir };
    //    The address claims' namespace as the Deployment sets it (the claims' Role is granted there only).
    const leaseNamespace = deploymentEnv(base, 'NETATTACH_CLAIMS_NAMESPACE');
    netattach = new Netattach({
      inCluster,
      tlsDir,
      port,
      healthPort,
      logPath: path.join(cluster.logsDir, 'netattach.log'),
      ...netattachOptions,
      env: { ...(leaseNamespace ? { NETATTACH_CLAIMS_NAMESPACE: leaseNamespace } : {}), ...netattachOptions.env },
    });
    netattach.start();
    await netattach.waitReady();
    log(`netattach ready at ${netattach.url} (health ${netattach.healthUrl})`);

    // 6. The webhook configurations of the manifests, clientConfig rewritten to the url; a
    //    dry-run canary pod proves both the mutating and the validating webhook are called.
    await applyOk([namespace(CANARY_NS), nad({ namespace: CANARY_NS, name: 'canary', config: macvlanConfig('canary') })]);
    const webhooks = rewriteWebhookConfigs(base.filter(isWebhookConfig), netattach.url, caPem);
    const na = netattach;
    await applyWebhookConfigs(cluster, webhooks, {
      namespace: CANARY_NS,
      canaryNetworks: 'canary',
      timeoutMs: 60_000,
      isCalled: async () =>
        (await na.metric('netattach_admission_reviews_total', { endpoint: 'mutate' })) > 0 &&
        (await na.metric('netattach_admission_reviews_total', { endpoint: 'validate' })) > 0,
    });
    log('webhook configurations applied and called');

    // which certificate is served, whatever CA signed it (the apiserver does the verifying)
    const servedSerial = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' }, () => {
          const serial = s.getPeerX509Certificate()?.serialNumber ?? '';
          s.end();
          resolve(serial);
        });
        s.on('error', reject);
      });

    const started = netattach;
    return {
      cluster,
      netattach: started,
      base,
      baseApply,
      webhooks,
      saKubeconfig,
      tlsDir,
      caPem,
      apply,
      applyOk,
      getJson,
      rotateCertificate: () => certs.renew(),
      installCertificates: (dir) => certs.swapIn(dir),
      kubeconfigFor: (ns, name) => serviceAccountKubeconfig(cluster, ns, name, work),
      servedSerial,
      tails: (lines = 60) => `${started.tail(lines)}\n${cluster.tailLogs(lines)}`,
      stop: async () => {
        await started.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    const tails = `${netattach ? netattach.tail(60) : ''}\n${cluster.tailLogs(60)}`;
    await netattach?.close();
    await cluster.stop();
    throw new Error(`${(e as Error).message}\n${tails}`);
  }
}
