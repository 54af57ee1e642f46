// Raw requests to the Kubernetes API with KubeCredentials (in-cluster or from a kubeconfig).
// Raw because client-node 1.3's Watch/ListWatch cannot ask for metadata-only objects (no Accept
// header) and its ListWatch keeps every object in memory.
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { PeerCertificate } from 'node:tls';
import type { KubeCredentials } from './credentials.js';
import { LineSplitter, ListSplitter, MAX_ITEM_BYTES, type ListEnvelope } from './list-stream.js';
import { proxiedRequest } from './proxy.js';
// Built-ins from process.getBuiltinModule, not `import x from 'node:x'`: an ES import of a built-in
// reads every export once, and node:http's lazy WebSocket, CloseEvent and MessageEvent then load
// undici (~1.3 MB of heap, held for good; issue 39); node:tls's rootCertificates parses the CA list.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
const net = process.getBuiltinModule('node:net');
const tls = process.getBuiltinModule('node:tls');

/** Ask for PartialObjectMetadata(List): pods and namespaces without spec and status. */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/**
 * Largest body of a GET read whole: one object (bounded by etcd at 1.5 MiB by default) or a
 * discovery document. Lists are not read whole: `list` streams them item by item.
 */
export const MAX_RESPONSE_BYTES = 2 * MAX_ITEM_BYTES;

/** A non-2xx answer; `reason` and `detail` are the Status object's reason and message, if any. */
export class KubeRequestError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly reason?: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface KubeTransport {
  getJson(path: string, query: Record<string, string | undefined>, accept?: string, signal?: AbortSignal): Promise<unknown>;
  /**
   * One page of a list, read as it arrives: each item goes to `onItem` parsed, and only one item
   * is held at a time. Optional for test doubles: without it, the page comes from `getJson`.
   */
  list?(
    path: string,
    query: Record<string, string | undefined>,
    accept: string,
    onItem: (item: unknown) => void,
    signal?: AbortSignal,
  ): Promise<ListEnvelope>;
  /** Streams a watch; resolves when the server ends it or `signal` aborts. `onOpen`: the server accepted it (HTTP 200). */
  watch(
    path: string,
    query: Record<string, string | undefined>,
    accept: string,
    onEvent: (event: unknown) => void,
    signal: AbortSignal,
    onOpen?: () => void,
  ): Promise<void>;
  patchJson(path: string, body: unknown, contentType: string): Promise<unknown>;
  /**
   * One write (POST, PUT, DELETE) bounded by `signal`: resolves with any HTTP status and the parsed
   * body (409 and 404 are answers here, not errors); rejects only when no answer came.
   */
  send?(method: 'POST' | 'PUT' | 'DELETE', path: string, body: unknown, signal: AbortSignal): Promise<{ status: number; body: unknown }>;
}

/** Request options carrying the credentials: TLS material, the server name, the current bearer token (or basic auth), impersonation. */
async function requestOptions(creds: KubeCredentials, method: string, headers: Record<string, string>): Promise<RequestOptions> {
  const token = await creds.token?.();
  const all: Record<string, string | string[]> = { ...headers, ...impersonationHeaders(creds) };
  if (token) all['Authorization'] = `Bearer ${token}`;
  else if (creds.basicAuth)
    all['Authorization'] = `Basic ${Buffer.from(`${creds.basicAuth.username}:${creds.basicAuth.password}`).toString('base64')}`;
  const name = creds.tlsServerName;
  return {
    method,
    headers: all,
    ...(creds.ca ? { ca: creds.ca } : {}),
    ...(creds.cert ? { cert: creds.cert } : {}),
    ...(creds.key ? { key: creds.key } : {}),
    ...(creds.insecureSkipTLSVerify ? { rejectUnauthorized: false } : {}),
    // tls-server-name: the SNI (a name only: RFC 6066 forbids an address there) and the name the certificate must carry.
    ...(name
      ? {
          ...(net.isIP(name) ? {} : { servername: name }),
          checkServerIdentity: (_host: string, cert: PeerCertificate) => tls.checkServerIdentity(name, cert),
        }
      : {}),
  };
}

/** Impersonate-* headers of a kubeconfig's as, as-uid, as-groups, as-user-extra (client-go's names and escaping). */
export function impersonationHeaders(creds: KubeCredentials): Record<string, string | string[]> {
  const imp = creds.impersonate;
  if (!imp) return {};
  const h: Record<string, string | string[]> = { 'Impersonate-User': imp.user };
  if (imp.uid) h['Impersonate-Uid'] = imp.uid;
  if (imp.groups.length > 0) h['Impersonate-Group'] = [...imp.groups];
  for (const [k, values] of Object.entries(imp.extra)) if (values.length > 0) h[`Impersonate-Extra-${escapeExtraKey(k)}`] = [...values];
  return h;
}

/** client-go's headerKeyEscape: characters outside a header token, percent-encoded (the apiserver unescapes them). */
const escapeExtraKey = (k: string): string =>
  [...Buffer.from(k, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9!#$&'*+.^_`|~-]/.test(String.fromCharCode(b)) && b < 0x80
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** One request to `url`: directly, or through the kubeconfig's proxy-url. */
function issue(creds: KubeCredentials, url: URL, opts: RequestOptions, onResponse: (res: IncomingMessage) => void): ClientRequest {
  if (creds.proxy) return proxiedRequest(creds.proxy, url, opts, onResponse);
  return (url.protocol === 'http:' ? http : https).request(url, opts, onResponse);
}

export function kubeTransport(creds: KubeCredentials, requestTimeoutMs = 30_000): KubeTransport {
  const base = creds.server.replace(/\/$/, '');
  const urlOf = (path: string): URL => new URL(base + path);
  /** On a 401 the token may have rotated: re-read it and try once more (a drained first answer). */
  const retryOn401 = async <T extends { res: IncomingMessage }>(send: () => Promise<T>): Promise<T> => {
    const first = await send();
    if (first.res.statusCode !== 401 || !creds.unauthorized?.()) return first;
    first.res.resume();
    return send();
  };
  const openOnce = async (
    method: string,
    path: string,
    query: Record<string, string | undefined>,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    /** Idle timeout of the socket (watches may be quiet for minutes: a longer one). */
    idleMs: number | undefined,
  ): Promise<{ res: IncomingMessage; req: ClientRequest; url: URL }> => {
    const url = urlOf(path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    const opts = await requestOptions(creds, method, headers);
    if (signal) opts.signal = signal;
    return new Promise((resolve, reject) => {
      const req = issue(creds, url, opts, (res) => resolve({ res, req, url }));
      req.on('error', reject);
      if (idleMs) req.setTimeout(idleMs, () => req.destroy(new Error(`timeout after ${idleMs} ms`)));
      req.end();
    });
  };
  const open = (...args: Parameters<typeof openOnce>) => retryOn401(() => openOnce(...args));
  const readBody = async (res: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res) {
      size += (c as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.destroy();
        throw new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  };
  const fail = async (res: IncomingMessage, what: string): Promise<never> => {
    const body = await readBody(res).catch(() => '');
    let message = body.slice(0, 200);
    let status: { reason?: unknown; message?: unknown } = {};
    try {
      status = (JSON.parse(body) as typeof status | null) ?? {};
      message = String(status.message ?? message);
    } catch {
      /* not a Status object */
    }
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    throw new KubeRequestError(
      res.statusCode ?? 0,
      `${what}: HTTP ${res.statusCode}: ${message}`,
      text(status.reason),
      text(status.message),
    );
  };
  return {
    async getJson(path, query, accept = 'application/json', signal) {
      const { res } = await open('GET', path, query, { Accept: accept }, signal, requestTimeoutMs);
      if (res.statusCode !== 200) return fail(res, `GET ${path}`);
      return JSON.parse(await readBody(res)) as unknown;
    },
    async list(path, query, accept, onItem, signal) {
      const { res } = await open('GET', path, query, { Accept: accept }, signal, requestTimeoutMs);
      if (res.statusCode !== 200) return fail(res, `GET ${path}`);
      const splitter = new ListSplitter(onItem);
      try {
        for await (const chunk of res) splitter.write(chunk as Buffer);
      } catch (err) {
        res.destroy();
        throw err;
      }
      return splitter.end();
    },
    async watch(path, query, accept, onEvent, signal, onOpen) {
      // The server ends a watch after timeoutSeconds (300); silence beyond that means a dead connection.
      const { res } = await open('GET', path, { ...query, watch: 'true' }, { Accept: accept }, signal, 330_000);
      if (res.statusCode !== 200) return fail(res, `watch ${path}`);
      onOpen?.();
      const lines = new LineSplitter((line) => {
        if (!line.trim()) return;
        let event: unknown;
        try {
          event = JSON.parse(line);
        } catch {
          return; // a torn line at disconnect; the relist/rewatch recovers
        }
        onEvent(event);
      });
      try {
        for await (const chunk of res) lines.write(chunk as Buffer);
        lines.end();
      } catch (err) {
        res.destroy();
        if (!signal.aborted) throw err;
      }
    },
    async send(method, path, body, signal) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const url = urlOf(path);
      const { res } = await retryOn401(async () => {
        // Content-Length always: Node sends a DELETE body neither chunked nor sized otherwise, and
        // the server would drop it (and with it the preconditions).
        const headers: Record<string, string> = { Accept: 'application/json' };
        if (payload !== undefined)
          Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) });
        const opts = await requestOptions(creds, method, headers);
        opts.signal = signal;
        return new Promise<{ res: IncomingMessage }>((resolve, reject) => {
          const req = issue(creds, url, opts, (res) => resolve({ res }));
          req.on('error', reject);
          req.end(payload);
        });
      });
      const text = await readBody(res);
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text.slice(0, 200);
      }
      return { status: res.statusCode ?? 0, body: parsed };
    },
    async patchJson(path, body, contentType) {
      const payload = JSON.stringify(body);
      const url = urlOf(path);
      const { res } = await retryOn401(async () => {
        const opts = await requestOptions(creds, 'PATCH', { 'Content-Type': contentType, Accept: 'application/json' });
        return new Promise<{ res: IncomingMessage }>((resolve, reject) => {
          const req = issue(creds, url, opts, (res) => resolve({ res }));
          req.on('error', reject);
          req.setTimeout(requestTimeoutMs, () => req.destroy(new Error(`timeout after ${requestTimeoutMs} ms`)));
          req.end(payload);
        });
      });
      // 201: a server-side apply that created the object.
      if (res.statusCode !== 200 && res.statusCode !== 201) return fail(res, `PATCH ${path}`);
      return JSON.parse(await readBody(res)) as unknown;
    },
  };
}
