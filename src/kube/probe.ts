// One cheap request before the reads (GET /version), to say at once, as kubectl says it, what no
// retry will fix: a refused or unresolvable server, a proxy that refuses, a certificate that does
// not verify, rejected credentials. Without it the list/watch loops retried a refused connection
// until --request-timeout (10 s) ran out. Messages name the server (never its credentials) and
// pass through redactSecrets.
import { redactSecrets, type KubeCredentials } from './credentials.js';
import { KubeconfigError } from './kubeconfig.js';
import { ProxyError } from './proxy.js';
import { KubeRequestError, kubeTransport } from './transport.js';

const TLS_CODES = /^(UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|CERT_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH)/;

const hostOf = (server: string): string => {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
};

/** kubectl's wording for a request that got no HTTP answer (or a 401), naming the server. */
export function describeConnectionError(err: unknown, creds: KubeCredentials): string {
  const host = hostOf(creds.server);
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const first = (typeof e?.message === 'string' ? e.message : String(err)).split('\n')[0]!.slice(0, 300);
  let text: string;
  if (err instanceof KubeRequestError && err.statusCode === 401) text = `You must be logged in to the server ${host} (Unauthorized)`;
  else if (err instanceof KubeRequestError)
    text = `the server ${host} answered HTTP ${err.statusCode}${err.detail ? `: ${err.detail}` : ''}`;
  else if (err instanceof KubeconfigError) text = err.message;
  else if (err instanceof ProxyError) {
    text =
      err.code === 'ECONNREFUSED'
        ? `Unable to connect to the server ${host}: the connection to the proxy ${err.proxy} (proxy-url) was refused`
        : err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN'
          ? `Unable to connect to the server ${host}: the proxy ${err.proxy} (proxy-url): no such host`
          : `Unable to connect to the server ${host} through the proxy ${err.proxy} (proxy-url): ${err.message}`;
  } else if (code === 'ECONNREFUSED') text = `The connection to the server ${host} was refused - did you specify the right host or port?`;
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    text = `Unable to connect to the server ${host}: no such host (${code})`;
  else if (code && TLS_CODES.test(code))
    text = `Unable to connect to the server ${host}: tls: failed to verify certificate: ${first} (${code}; see certificate-authority, tls-server-name)`;
  else text = `Unable to connect to the server ${host}: ${code ?? first}`;
  return redactSecrets(text, creds);
}

/**
 * GET /version within `timeoutMs`: a message when the answer shows the cluster cannot be read (no
 * connection, TLS, proxy, 401), else undefined (also when it is merely slow: the reads then say so).
 */
export async function probeServer(creds: KubeCredentials, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([deadline, signal]) : deadline;
  try {
    await kubeTransport(creds, timeoutMs).getJson('/version', {}, 'application/json', both);
    return undefined;
  } catch (err) {
    if (both.aborted) return undefined;
    if (err instanceof KubeRequestError && err.statusCode !== 401) return undefined;
    return describeConnectionError(err, creds);
  }
}
