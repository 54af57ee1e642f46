// A kubeconfig user's `exec` credential plugin or `auth-provider`, run by @kubernetes/client-node's
// authenticators as before (its ExecAuth caches the ExecCredential until it expires; its OIDC and
// other providers refresh). The only module that imports client-node for the plugin, and only when
// such a user is chosen: its import costs ~0.9 s.
import { absoluteFrom, KubeconfigError, redact, type ResolvedKubeconfig } from './kubeconfig.js';

export interface PluginCredentials {
  cert?: Buffer;
  key?: Buffer;
  token: () => Promise<string | undefined>;
}

export async function pluginCredentials(config: ResolvedKubeconfig): Promise<PluginCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { cluster, user } = config;
  let exec = user.exec;
  const command = exec?.['command'];
  // kubectl runs a relative command with a path separator relative to the kubeconfig naming it.
  if (exec && typeof command === 'string' && command.includes('/')) exec = { ...exec, command: absoluteFrom(user.origin.file, command) };
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: cluster.server, // Only credentials are taken from it (it never connects); client-node refuses an http server without this.
        skipTLSVerify: cluster.insecureSkipTLSVerify || cluster.server.startsWith('http:'),
        ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
      },
    ],
    users: [{ name: 'u', ...(exec ? { exec } : {}), ...(user.authProvider ? { authProvider: user.authProvider } : {}) }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const field = user.exec ? 'exec' : 'auth-provider';
  const apply = async (): Promise<{ cert?: unknown; key?: unknown; headers: Record<string, unknown> }> => {
    const opts: { cert?: unknown; key?: unknown; headers: Record<string, unknown> } = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (e) {
      // A plugin's stderr or a provider's message may repeat its env or config: said by the caller
      // through redactSecrets, cut to its first line here.
      const why = (e instanceof Error ? e.message : String(e)).split('\n').find((l) => l.trim()) ?? 'failed';
      throw new KubeconfigError({
        file: user.origin.file,
        path: `${user.origin.path}.${field}`,
        reason: `getting credentials: ${redact(why, user.secrets).slice(0, 300)}`,
      });
    }
    return opts;
  };
  const first = await apply();
  const buf = (v: unknown): Buffer | undefined =>
    v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v : Buffer.from(String(v));
  const cert = buf(first.cert);
  const key = buf(first.key);
  if (key) user.secrets.push(key.toString('utf8').trim());
  const bearer = (headers: Record<string, unknown>): string | undefined => {
    const auth = headers['Authorization'] ?? headers['authorization'];
    const token = typeof auth === 'string' && /^bearer /i.test(auth) ? auth.slice(7) : undefined;
    if (token) user.secrets.push(token);
    return token;
  };
  bearer(first.headers);
  return {
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    token: async () => bearer((await apply()).headers),
  };
}
