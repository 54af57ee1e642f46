// Requests through a kubeconfig's `proxy-url`, as client-go sends them: to an https API server
// through an HTTP CONNECT tunnel (TLS to the server inside it, so the proxy sees no credential),
// to an http one as an absolute-URI request to the proxy. The proxy itself may be http or https;
// its user and password (in the URL) go to it as Proxy-Authorization, never anywhere else.
// Node's own http CONNECT, no library: ~60 lines, and errors we can name without the URL's secret.
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { ConnectionOptions, PeerCertificate } from 'node:tls';
// Built-ins from process.getBuiltinModule, not `import x from 'node:x'`: an ES import of a built-in
// reads every export once, and node:http's lazy WebSocket, CloseEvent and MessageEvent then load
// undici (~1.3 MB of heap, held for good; issue 39); node:tls's rootCertificates parses the CA list.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
const net = process.getBuiltinModule('node:net');
const tls = process.getBuiltinModule('node:tls');

/** A proxy URL kubectl accepts that we can honour (http, https); a message naming why not, else. */
export function parseProxyUrl(text: string): URL | { reason: string; value?: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { reason: 'is not a URL' };
  }
  if (url.protocol === 'socks5:' || url.protocol === 'socks5h:')
    return {
      reason:
        'socks5 proxies are not supported by netattach (only http and https proxies); run the plugin where the API server is reachable through an http proxy',
      value: proxyDisplay(url),
    };
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { reason: 'must be an http, https or socks5 URL', value: proxyDisplay(url) };
  if (!url.hostname) return { reason: 'names no host' };
  return url;
}

/** The proxy as it may be printed: scheme, host and port, never its user or password. */
export const proxyDisplay = (url: URL): string => `${url.protocol}//${url.host}`;

const proxyAuthorization = (proxy: URL): Record<string, string> =>
  proxy.username || proxy.password
    ? {
        'Proxy-Authorization': `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`,
      }
    : {};

/** An error of the proxy leg (refused, DNS, a non-200 CONNECT answer): the plugin names the proxy. */
export class ProxyError extends Error {
  constructor(
    message: string,
    readonly proxy: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProxyError';
  }
}

const proxyPort = (proxy: URL): number => Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));

/**
 * Opens a tunnel to `target` through `proxy` and hands back the raw socket; rejects with a
 * ProxyError. `signal` aborts the CONNECT.
 */
export function connectTunnel(proxy: URL, target: { host: string; port: number }, signal?: AbortSignal): Promise<Socket> {
  const authority = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const lib = proxy.protocol === 'https:' ? https : http;
  const display = proxyDisplay(proxy);
  return new Promise((resolve, reject) => {
    const req = lib.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxyPort(proxy),
      method: 'CONNECT',
      path: authority,
      headers: { Host: authority, ...proxyAuthorization(proxy) },
      agent: false,
      ...(signal ? { signal } : {}),
    });
    req.on('connect', (res, socket, head) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(
          new ProxyError(
            `the proxy ${display} answered CONNECT with HTTP ${res.statusCode}${res.statusMessage ? ` ${res.statusMessage}` : ''}`,
            display,
            `HTTP_${res.statusCode}`,
          ),
        );
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.on('response', (res) => {
      res.resume();
      reject(new ProxyError(`the proxy ${display} answered CONNECT with HTTP ${res.statusCode}`, display, `HTTP_${res.statusCode}`));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (signal?.aborted) return reject(err);
      reject(new ProxyError(`proxyconnect ${display}: ${err.code ?? err.message}`, display, err.code));
    });
    req.end();
  });
}

/**
 * A request to `url` through `proxy`: https through a CONNECT tunnel (the TLS options of `opts`
 * apply to the server inside it), http as an absolute-URI request to the proxy.
 */
export function proxiedRequest(proxy: URL, url: URL, opts: RequestOptions, onResponse: (res: IncomingMessage) => void): ClientRequest {
  if (url.protocol === 'http:') {
    const lib = proxy.protocol === 'https:' ? https : http;
    const headers = { ...(opts.headers as Record<string, string | string[]>), Host: url.host, ...proxyAuthorization(proxy) };
    return lib.request(
      {
        method: opts.method,
        host: proxy.hostname.replace(/^\[|\]$/g, ''),
        port: proxyPort(proxy),
        path: url.href,
        headers,
        agent: false,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      onResponse,
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const createConnection = (_o: unknown, done: (err: Error | null, socket?: Socket) => void): undefined => {
    connectTunnel(proxy, { host, port }, opts.signal).then(
      (raw) => {
        const servername = opts.servername ?? (net.isIP(host) ? undefined : host);
        const secure = tls.connect({
          socket: raw,
          ...(servername ? { servername } : {}),
          ...(opts.ca ? { ca: opts.ca } : {}),
          ...(opts.cert ? { cert: opts.cert } : {}),
          ...(opts.key ? { key: opts.key } : {}),
          rejectUnauthorized: opts.rejectUnauthorized !== false,
          checkServerIdentity:
            (opts.checkServerIdentity as ConnectionOptions['checkServerIdentity']) ??
            ((_h: string, cert: PeerCertificate) => tls.checkServerIdentity(host, cert)),
          ALPNProtocols: ['http/1.1'],
        });
        done(null, secure);
      },
      (err: Error) => done(err),
    );
    return undefined;
  };
  // No agent: with createConnection and no agent, the request uses this socket (agent: false would not).
  const { agent: _agent, ...rest } = opts;
  return https.request(url, { ...rest, createConnection } as RequestOptions, onResponse);
}

/**
 * The proxy kubectl would use for `server` when the kubeconfig names none: Go's
 * http.ProxyFromEnvironment (HTTPS_PROXY for https servers, HTTP_PROXY for http ones, upper case
 * first; NO_PROXY: `*`, host names with their subdomains, addresses, CIDRs, each optionally with a
 * port; localhost and loopback addresses are never proxied). Undefined: connect directly.
 */
export function proxyFromEnvironment(server: string, env: NodeJS.ProcessEnv): { url: string; variable: string } | undefined {
  const target = new URL(server);
  const https_ = target.protocol === 'https:';
  const variable = https_ ? (env.HTTPS_PROXY ? 'HTTPS_PROXY' : 'https_proxy') : env.HTTP_PROXY ? 'HTTP_PROXY' : 'http_proxy';
  let raw = env[variable];
  if (!raw) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (https_ ? '443' : '80');
  if (host === 'localhost' || isLoopback(host)) return undefined;
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of noProxy) {
    if (entry === '*') return undefined;
    let [h, p] = [entry, ''];
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (m) [h, p] = [m[1]!, m[2]!];
    h = h.replace(/^\[|\]$/g, '');
    if (p && p !== port) continue;
    if (h.includes('/') && net.isIP(host) && inCidr(host, h)) return undefined;
    if (net.isIP(h)) {
      if (h === host) return undefined;
      continue;
    }
    const suffix = h.startsWith('*.') ? h.slice(1) : h.startsWith('.') ? h : `.${h}`;
    if (host === suffix.slice(1) || host.endsWith(suffix)) return undefined;
  }
  // Go accepts a proxy without a scheme: http is assumed.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) raw = `http://${raw}`;
  return { url: raw, variable };
}

const isLoopback = (host: string): boolean => (net.isIPv4(host) && host.startsWith('127.')) || host === '::1';

function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  if (!base || !net.isIP(base) || net.isIP(base) !== net.isIP(ip) || !Number.isInteger(bits)) return false;
  const list = new net.BlockList();
  try {
    list.addSubnet(base, bits, net.isIPv6(base) ? 'ipv6' : 'ipv4');
  } catch {
    return false;
  }
  return list.check(ip, net.isIPv6(ip) ? 'ipv6' : 'ipv4');
}
