// Raw requests to the Kubernetes API with @kubernetes/client-node's credentials and TLS
// (KubeConfig.applyToHTTPSOptions). Raw because client-node 1.3's Watch/ListWatch cannot ask for
// metadata-only objects (no Accept header) and its ListWatch keeps every object in memory.
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';

/** Ask for PartialObjectMetadata(List): pods and namespaces without spec and status. */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** Largest response body accepted (a page of 500 kubectl-applied NADs is ~1-2 MB). */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

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
  /** Streams a watch; resolves when the server ends it or `signal` aborts. */
  watch(path: string, query: Record<string, string | undefined>, accept: string, onEvent: (event: unknown) => void, signal: AbortSignal): Promise<void>;
  patchJson(path: string, body: unknown, contentType: string): Promise<unknown>;
}

export function kubeTransport(kc: KubeConfig, requestTimeoutMs = 30_000): KubeTransport {
  const open = async (
    method: string,
    path: string,
    query: Record<string, string | undefined>,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    /** Idle timeout of the socket (watches may be quiet for minutes: a longer one). */
    idleMs: number | undefined,
  ): Promise<{ res: http.IncomingMessage; req: http.ClientRequest; url: URL }> => {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('kubeconfig has no current cluster');
    const url = new URL(server.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    const opts: https.RequestOptions = { method, headers: {} };
    await kc.applyToHTTPSOptions(opts);
    opts.headers = { ...(opts.headers as Record<string, string>), ...headers };
    if (signal) opts.signal = signal;
    const lib = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, opts, (res) => resolve({ res, req, url }));
      req.on('error', reject);
      if (idleMs) req.setTimeout(idleMs, () => req.destroy(new Error(`timeout after ${idleMs} ms`)));
      req.end();
    });
  };
  const readBody = async (res: http.IncomingMessage): Promise<string> => {
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
  const fail = async (res: http.IncomingMessage, what: string): Promise<never> => {
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
    throw new KubeRequestError(res.statusCode ?? 0, `${what}: HTTP ${res.statusCode}: ${message}`, text(status.reason), text(status.message));
  };
  return {
    async getJson(path, query, accept = 'application/json', signal) {
      const { res } = await open('GET', path, query, { Accept: accept }, signal, requestTimeoutMs);
      if (res.statusCode !== 200) return fail(res, `GET ${path}`);
      return JSON.parse(await readBody(res)) as unknown;
    },
    async watch(path, query, accept, onEvent, signal) {
      // The server ends a watch after timeoutSeconds (300); silence beyond that means a dead connection.
      const { res } = await open('GET', path, { ...query, watch: 'true' }, { Accept: accept }, signal, 330_000);
      if (res.statusCode !== 200) return fail(res, `watch ${path}`);
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line.trim()) continue;
          let event: unknown;
          try {
            event = JSON.parse(line);
          } catch {
            continue; // a torn line at disconnect; the relist/rewatch recovers
          }
          onEvent(event);
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
    },
    async patchJson(path, body, contentType) {
      const payload = JSON.stringify(body);
      const server = kc.getCurrentCluster()?.server;
      if (!server) throw new Error('kubeconfig has no current cluster');
      const url = new URL(server.replace(/\/$/, '') + path);
      const opts: https.RequestOptions = { method: 'PATCH', headers: {} };
      await kc.applyToHTTPSOptions(opts);
      opts.headers = { ...(opts.headers as Record<string, string>), 'Content-Type': contentType, Accept: 'application/json' };
      const lib = url.protocol === 'http:' ? http : https;
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = lib.request(url, opts, resolve);
        req.on('error', reject);
        req.setTimeout(requestTimeoutMs, () => req.destroy(new Error(`timeout after ${requestTimeoutMs} ms`)));
        req.end(payload);
      });
      if (res.statusCode !== 200) return fail(res, `PATCH ${path}`);
      return JSON.parse(await readBody(res)) as unknown;
    },
  };
}
