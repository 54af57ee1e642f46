// Where the API server is and how to authenticate to it. In-cluster credentials (the pod's
// service-account token and CA) and kubeconfig files (src/kube/kubeconfig.ts, with the `yaml`
// package) are read here without @kubernetes/client-node: importing that library costs ~0.9 s and
// ~127 MB, so it is loaded only for a user with an `exec` credential plugin or an `auth-provider`.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeconfigError, readKubeconfig, redact, type KubeconfigUser, type ResolvedKubeconfig } from './kubeconfig.js';
import { parseProxyUrl, proxyFromEnvironment } from './proxy.js';

export interface KubeCredentials {
  /** Base URL, e.g. https://10.96.0.1:443. */
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecureSkipTLSVerify?: boolean;
  /** kubeconfig tls-server-name: the TLS server name (SNI) and the name the server certificate must carry. */
  tlsServerName?: string;
  /** kubeconfig proxy-url: every request goes through it (http or https proxy; CONNECT for https servers). */
  proxy?: URL;
  /** kubeconfig username/password: HTTP basic auth (when there is no bearer token). */
  basicAuth?: { username: string; password: string };
  /** kubeconfig as, as-uid, as-groups, as-user-extra: sent as Impersonate-* headers. */
  impersonate?: { user: string; uid?: string; groups: readonly string[]; extra: Readonly<Record<string, readonly string[]>> };
  /** kubeconfig disable-compression (never asked for here: requests carry no Accept-Encoding). */
  disableCompression?: boolean;
  /** Values never to print (tokens, passwords, keys, exec env values, the proxy's password): see redactSecrets. */
  secrets?: readonly string[];
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

/**
 * Credentials of a kubeconfig's chosen context. Every field kubectl honours is honoured; one that
 * cannot be (a socks5 proxy-url) is refused with a KubeconfigError naming it. client-node is
 * loaded only for `exec` and `auth-provider` (its authenticators run them, as before).
 */
export async function credentialsFromKubeconfig(
  config: ResolvedKubeconfig,
  options: { now?: () => number; rereadMs?: number /** For HTTPS_PROXY, NO_PROXY (default: process.env). */; env?: NodeJS.ProcessEnv } = {},
): Promise<KubeCredentials> {
  const { cluster, user } = config;
  // The user's own list: a plugin's tokens and a re-read token file join it as they come.
  const secrets = user.secrets;
  let proxy: URL | undefined;
  // proxy-url, else the environment's proxy as kubectl (Go) reads it: HTTPS_PROXY, NO_PROXY.
  const fromEnv = cluster.proxyUrl ? undefined : proxyFromEnvironment(cluster.server, options.env ?? process.env);
  const proxyText = cluster.proxyUrl ?? fromEnv?.url;
  if (proxyText) {
    const parsed = parseProxyUrl(proxyText);
    if (!(parsed instanceof URL)) {
      if (fromEnv)
        throw new KubeconfigError({
          file: '$' + fromEnv.variable,
          path: '',
          ...(parsed.value ? { value: parsed.value } : {}),
          reason: `the proxy for ${cluster.server} ${parsed.reason}`,
        });
      throw new KubeconfigError({
        file: cluster.origin.file,
        path: `${cluster.origin.path}.proxy-url`,
        ...(parsed.value ? { value: parsed.value } : {}),
        reason: parsed.reason,
      });
    }
    proxy = parsed;
    if (proxy.password) secrets.push(proxy.password, decodeURIComponent(proxy.password));
  }
  const creds: KubeCredentials = {
    server: cluster.server,
    ...(cluster.ca ? { ca: cluster.ca } : {}),
    ...(user.cert ? { cert: user.cert } : {}),
    ...(user.key ? { key: user.key } : {}),
    ...(cluster.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    ...(proxy ? { proxy } : {}),
    ...(cluster.disableCompression ? { disableCompression: true } : {}),
    ...(user.username !== undefined ? { basicAuth: { username: user.username, password: user.password ?? '' } } : {}),
    ...(user.as
      ? { impersonate: { user: user.as, ...(user.asUid ? { uid: user.asUid } : {}), groups: user.asGroups, extra: user.asUserExtra } }
      : {}),
    secrets,
    source: 'kubeconfig',
  };
  if (user.exec || user.authProvider) {
    const { pluginCredentials } = await import('./plugin-auth.js');
    const plugin = await pluginCredentials(config);
    if (plugin.cert && !creds.cert) creds.cert = plugin.cert;
    if (plugin.key && !creds.key) creds.key = plugin.key;
    creds.token = plugin.token;
  } else if (user.token || user.tokenFile) {
    Object.assign(creds, tokenOf(user, options.now ?? Date.now, options.rereadMs ?? TOKEN_REREAD_MS, secrets));
  }
  return creds;
}

/** token, else tokenFile; the file wins while it can be read and is re-read each minute and on a 401 (client-go's cached file token source). */
function tokenOf(
  user: KubeconfigUser,
  now: () => number,
  rereadMs: number,
  secrets: string[],
): Pick<KubeCredentials, 'token' | 'unauthorized'> {
  const file = user.tokenFile;
  if (!file) return { token: () => user.token };
  const read = (): string | undefined => {
    try {
      const t = readFileSync(file, 'utf8').trim();
      if (t) secrets.push(t);
      return t || undefined;
    } catch {
      return undefined;
    }
  };
  let token = read();
  if (token === undefined && user.token === undefined) {
    throw new KubeconfigError({ file: user.origin.file, path: `${user.origin.path}.tokenFile`, value: file, reason: 'cannot be read' });
  }
  let readAt = now();
  return {
    token: () => {
      if (now() - readAt >= rereadMs) {
        readAt = now();
        token = read() ?? token;
      }
      return token ?? user.token;
    },
    unauthorized: () => {
      const before = token;
      token = read() ?? token;
      readAt = now();
      return token !== before;
    },
  };
}

/** Kubeconfig files merged as kubectl merges them, the current (or the given) context's credentials. */
export async function kubeconfigCredentials(
  files: readonly string[],
  options: { context?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<KubeCredentials> {
  return credentialsFromKubeconfig(
    readKubeconfig(files, options.context !== undefined ? { context: options.context } : {}),
    options.env ? { env: options.env } : {},
  );
}

/** `text` with every secret of `creds` replaced: for messages that quote what a server, a proxy or a credential plugin said. */
export function redactSecrets(text: string, creds: Pick<KubeCredentials, 'secrets'> | undefined): string {
  return redact(text, creds?.secrets ?? []);
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
    const files = defaultKubeconfigFiles({
      env,
      ...(where.home ? { home: where.home } : {}),
      ...(where.exists ? { exists: where.exists } : {}),
    });
    if (files.length > 0) return await kubeconfigCredentials(files);
    return inClusterCredentials({ env, ...(where.serviceAccountDir ? { dir: where.serviceAccountDir } : {}) });
  } catch {
    return undefined;
  }
}
