// Where the API server is and how to authenticate to it. In-cluster credentials (the pod's
// service-account token and CA) are read here without @kubernetes/client-node: importing that
// library costs ~60 MB of RSS, so only the kubeconfig path loads it, lazily.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';

export interface KubeCredentials {
  /** Base URL, e.g. https://10.96.0.1:443. */
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecureSkipTLSVerify?: boolean;
  /** The bearer token for the next request (called per request: tokens rotate). */
  token?: () => string | undefined | Promise<string | undefined>;
  /** The server answered 401: forget a cached token; true when the next `token()` may differ. */
  unauthorized?: () => boolean;
  /** For logs: which loader produced these. */
  source: 'in-cluster' | 'kubeconfig' | 'static';
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The namespace of the pod netattach runs in (its service account's), or undefined outside a pod. */
export function serviceAccountNamespace(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return readFileSync(join(env.NETATTACH_SERVICEACCOUNT_DIR || SERVICE_ACCOUNT_DIR, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
/** Bound service-account tokens rotate (kubelet refreshes the file at 80% of their lifetime). */
export const TOKEN_REREAD_MS = 60_000;

export interface InClusterOptions {
  env?: NodeJS.ProcessEnv;
  /** The service-account directory (token, ca.crt); default: $NETATTACH_SERVICEACCOUNT_DIR, else the kubelet's mount. */
  dir?: string;
  rereadMs?: number;
  now?: () => number;
}

/**
 * The pod's own credentials, or undefined when not in a cluster (no KUBERNETES_SERVICE_HOST/PORT
 * or no token file). Throws when the token exists but cannot be read.
 */
export function inClusterCredentials(options: InClusterOptions = {}): KubeCredentials | undefined {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const dir = options.dir ?? (env.NETATTACH_SERVICEACCOUNT_DIR || SERVICE_ACCOUNT_DIR);
  const tokenFile = join(dir, 'token');
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const rereadMs = options.rereadMs ?? TOKEN_REREAD_MS;
  const now = options.now ?? Date.now;
  const read = (): string => readFileSync(tokenFile, 'utf8').trim();
  let token = read();
  let readAt = now();
  const caFile = join(dir, 'ca.crt');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ...(existsSync(caFile) ? { ca: readFileSync(caFile) } : {}),
    token: () => {
      if (now() - readAt >= rereadMs) {
        readAt = now();
        try {
          token = read();
        } catch {
          // keep the last token; the file is swapped atomically, so this is a passing race
        }
      }
      return token;
    },
    unauthorized: () => {
      const before = token;
      readAt = -Infinity;
      try {
        token = read();
        readAt = now();
      } catch {
        /* keep it */
      }
      return token !== before;
    },
    source: 'in-cluster',
  };
}

/** Credentials of an already loaded KubeConfig (exec plugins and token refresh stay client-node's). */
export async function credentialsFromKubeConfig(kc: KubeConfig): Promise<KubeCredentials> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const tls: { ca?: unknown; cert?: unknown; key?: unknown; rejectUnauthorized?: boolean; headers?: Record<string, unknown> } = { headers: {} };
  await kc.applyToHTTPSOptions(tls);
  const buf = (v: unknown): Buffer | undefined => (v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
  const ca = buf(tls.ca);
  const cert = buf(tls.cert);
  const key = buf(tls.key);
  return {
    server: server.replace(/\/$/, ''),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(tls.rejectUnauthorized === false ? { insecureSkipTLSVerify: true } : {}),
    token: async () => {
      const opts: { headers: Record<string, unknown> } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      const auth = opts.headers.Authorization ?? opts.headers.authorization;
      return typeof auth === 'string' && /^bearer /i.test(auth) ? auth.slice(7) : undefined;
    },
    source: 'kubeconfig',
  };
}

/** Kubeconfig files merged as kubectl merges them (the first one's current context), loading client-node only now. */
export async function loadKubeConfig(files: readonly string[]): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(files[0]!);
  for (const extra of files.slice(1)) {
    const other = new KubeConfig();
    other.loadFromFile(extra);
    kc.mergeConfig(other);
  }
  return kc;
}

/** Kubeconfig files (the first existing one, merged with the rest), loading client-node only now. */
export async function kubeconfigCredentials(files: readonly string[]): Promise<KubeCredentials> {
  return credentialsFromKubeConfig(await loadKubeConfig(files));
}

/**
 * The kubeconfig files kubectl reads when none is named: those of $KUBECONFIG that exist, else
 * ~/.kube/config if it exists. Empty when there are none (then: in-cluster, or nothing).
 */
export function defaultKubeconfigFiles(where: { env: NodeJS.ProcessEnv; home?: string; exists?: (path: string) => boolean }): string[] {
  const exists = where.exists ?? existsSync;
  const listed = (where.env.KUBECONFIG ?? '').split(process.platform === 'win32' ? ';' : ':').filter(Boolean);
  if (listed.length > 0) return listed.filter((f) => exists(f));
  const home = join(where.home ?? homedir(), '.kube', 'config');
  return exists(home) ? [home] : [];
}

export interface FindCredentialsOptions {
  env?: NodeJS.ProcessEnv;
  home?: string;
  exists?: (path: string) => boolean;
  /** The service-account directory for the in-cluster case. */
  serviceAccountDir?: string;
}

/**
 * The cluster configuration as kubectl finds it ($KUBECONFIG, ~/.kube/config, then in-cluster),
 * or undefined when there is none: client-node's loadFromDefault would instead fall back to
 * http://localhost:8080, which is never what a webhook wants.
 */
export async function findCredentials(where: FindCredentialsOptions = {}): Promise<KubeCredentials | undefined> {
  const env = where.env ?? process.env;
  try {
    const files = defaultKubeconfigFiles({ env, ...(where.home ? { home: where.home } : {}), ...(where.exists ? { exists: where.exists } : {}) });
    if (files.length > 0) return await kubeconfigCredentials(files);
    return inClusterCredentials({ env, ...(where.serviceAccountDir ? { dir: where.serviceAccountDir } : {}) });
  } catch {
    return undefined;
  }
}
