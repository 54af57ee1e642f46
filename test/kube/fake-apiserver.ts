// A small fake Kubernetes API server over plain HTTP, or HTTPS with a generated CA (startTls):
// collections by path with paged lists, streaming watches the test drives, GET of one object,
// PATCH recording, and knobs for failures and delays. NAD helpers (add/remove) bump a
// resourceVersion like the real server does.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeCredentials } from '../../src/kube/index.js';
import { generateCertificates } from '../../src/certs/index.js';

type Obj = Record<string, unknown>;
export const NADS_PATH = '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** The header lines as sent (a repeated header is several entries here, one joined value in `headers`). */
  rawHeaders: string[];
  /** HTTPS: the TLS server name (SNI) the client asked for, and the SHA-256 fingerprint of its certificate, if it sent one. */
  servername?: string;
  clientCert?: string;
  body: string;
}

export interface GetBehaviour {
  status?: number;
  delayMs?: number;
  body?: unknown;
}

export class FakeApiServer {
  readonly requests: Recorded[] = [];
  /** The bearer token of each request. */
  readonly authorizations: string[] = [];
  /** Served by GET only (`namespace/name`): created "a moment ago", not yet seen by the watch. */
  readonly getOnly = new Map<string, Obj>();
  readonly getBehaviour = new Map<string, GetBehaviour>();
  /** The behaviour of single-object GETs without their own entry in getBehaviour. */
  defaultGetBehaviour: GetBehaviour = {};
  /** Single-object GETs being answered now, and the most there ever were at once. */
  getsInFlight = 0;
  maxGetsInFlight = 0;
  patchReply: (path: string, body: unknown) => unknown = (_p, body) => body;
  /** The next N list (or watch) requests answer 500. */
  listFailures = 0;
  watchFailures = 0;
  /** Watches answer 200 and end at once. */
  endWatchesAtOnce = false;
  /** List pages after the first (a `continue` token) are answered this much later: a relist under way. */
  continueDelayMs = 0;
  /** Requests for list pages (several per list when paginated), watches and single-object GETs. */
  lists = 0;
  watches = 0;
  gets = 0;
  private readonly collections = new Map<string, { items: Obj[]; rv: string }>();
  private readonly watchers = new Map<string, Set<http.ServerResponse>>();
  private resourceVersion = 100;
  /** When set, requests without `Authorization: Bearer <requiredToken>` answer 401 (a Status). */
  requiredToken: string | undefined;
  private server: http.Server | https.Server = http.createServer((req, res) => void this.handle(req, res));

  /** Starts serving; only collections given by setList (or add) exist. */
  async start(token = 'secret-token'): Promise<KubeCredentials> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return { server: `http://127.0.0.1:${this.port}`, token: () => token, source: 'static' };
  }

  /** Starts serving HTTPS on 127.0.0.1 with a fresh CA; the port and the CA (PEM) to trust. */
  async startTls(options: { requestCert?: boolean } = {}): Promise<{ port: number; ca: string }> {
    const set = generateCertificates({ service: 'kubernetes', namespace: 'default', sans: ['127.0.0.1', 'localhost'] });
    // requestCert: a client certificate is asked for and recorded (not verified: the test compares fingerprints).
    this.server = https.createServer(
      { cert: set.cert, key: set.key, ...(options.requestCert ? { requestCert: true, rejectUnauthorized: false } : {}) },
      (req, res) => void this.handle(req, res),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return { port: this.port, ca: set.caCert };
  }

  /** A kubeconfig file's text for this (plain HTTP) server. */
  kubeconfig(token = 'secret-token'): string {
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: fake\n  cluster: {server: "http://127.0.0.1:${this.port}", insecure-skip-tls-verify: true}`,
      'users:',
      `- name: u\n  user: {token: ${JSON.stringify(token)}}`,
      'contexts:',
      '- name: ctx\n  context: {cluster: fake, user: u}',
      'current-context: ctx',
      '',
    ].join('\n');
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Starts serving with the NAD collection present (empty until add), under another token. */
  listen(): Promise<KubeCredentials> {
    this.nads();
    return this.start('test-token');
  }

  async stop(): Promise<void> {
    for (const set of this.watchers.values()) for (const res of set) res.end();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  close(): Promise<void> {
    return this.stop();
  }

  setList(path: string, items: unknown[], rv: string): void {
    this.collections.set(path, { items: items as Obj[], rv });
  }

  /** Adds (or replaces) a NAD with the next resourceVersion and tells the watches. */
  add(obj: Obj): void {
    const meta = obj.metadata as Obj;
    meta.resourceVersion = String(++this.resourceVersion);
    const nads = this.nads();
    const i = nads.items.findIndex((o) => sameName(o, meta));
    if (i >= 0) nads.items[i] = obj;
    else nads.items.push(obj);
    nads.rv = String(this.resourceVersion);
    this.emit(NADS_PATH, { type: 'ADDED', object: obj });
  }

  remove(namespace: string, name: string): void {
    const nads = this.nads();
    const i = nads.items.findIndex((o) => sameName(o, { namespace, name }));
    if (i < 0) return;
    const [obj] = nads.items.splice(i, 1);
    (obj!.metadata as Obj).resourceVersion = nads.rv = String(++this.resourceVersion);
    this.emit(NADS_PATH, { type: 'DELETED', object: obj });
  }

  watching(path: string): number {
    return this.watchers.get(path)?.size ?? 0;
  }

  openWatches(): number {
    return [...this.watchers.values()].reduce((n, set) => n + set.size, 0);
  }

  emit(path: string, event: unknown): void {
    for (const res of this.watchers.get(path) ?? []) res.write(JSON.stringify(event) + '\n');
  }

  /** Ends the watches of a path cleanly, as the server does after timeoutSeconds. */
  endWatches(path: string): void {
    for (const res of this.watchers.get(path) ?? []) res.end();
    this.watchers.get(path)?.clear();
  }

  /** Cuts every open watch connection mid-stream. */
  dropWatches(): void {
    for (const set of this.watchers.values()) {
      for (const res of set) res.socket?.destroy();
      set.clear();
    }
  }

  private nads(): { items: Obj[]; rv: string } {
    let nads = this.collections.get(NADS_PATH);
    if (!nads) this.collections.set(NADS_PATH, (nads = { items: [], rv: String(this.resourceVersion) }));
    return nads;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const socket = req.socket as import('node:tls').TLSSocket;
    const servername = typeof socket.servername === 'string' ? socket.servername : undefined;
    const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      ...(servername ? { servername } : {}),
      ...(peer?.fingerprint256 ? { clientCert: peer.fingerprint256 } : {}),
      body,
    });
    this.authorizations.push(req.headers.authorization ?? '');
    const json = (status: number, reply: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    };
    if (this.requiredToken !== undefined && req.headers.authorization !== `Bearer ${this.requiredToken}`) {
      return json(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    }
    if (req.method === 'PATCH') return json(200, this.patchReply(url.pathname, JSON.parse(body)));
    if (url.pathname === '/version') return json(200, { major: '1', minor: '34', gitVersion: 'v1.34.0-fake' });
    const list = this.collections.get(url.pathname);
    if (!list) return this.getOne(url.pathname, res, json);
    if (url.searchParams.get('watch') === 'true') {
      this.watches++;
      if (this.watchFailures > 0) {
        this.watchFailures--;
        return json(500, { kind: 'Status', reason: 'InternalError', message: 'watch failed' });
      }
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      if (this.endWatchesAtOnce) return void res.end();
      res.flushHeaders();
      const set = this.watchers.get(url.pathname) ?? new Set();
      this.watchers.set(url.pathname, set);
      set.add(res);
      res.on('close', () => set.delete(res));
      return;
    }
    this.lists++;
    if (this.listFailures > 0) {
      this.listFailures--;
      return json(500, { kind: 'Status', reason: 'InternalError', message: 'etcd is sad' });
    }
    const limit = Number(url.searchParams.get('limit') ?? '0') || list.items.length;
    const start = Number(url.searchParams.get('continue') ?? '0');
    const next = start + limit < list.items.length ? String(start + limit) : undefined;
    const page = {
      kind: 'List',
      metadata: { resourceVersion: list.rv, ...(next ? { continue: next } : {}) },
      items: list.items.slice(start, start + limit),
    };
    if (start > 0 && this.continueDelayMs > 0) setTimeout(() => res.destroyed || json(200, page), this.continueDelayMs).unref();
    else json(200, page);
  }

  /** GET of `<group version>/namespaces/<ns>/<plural>/<name>` from its collection, or 404. */
  private getOne(path: string, res: http.ServerResponse, json: (status: number, reply: unknown) => void): void {
    const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
    if (!m) return json(404, { kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' });
    this.gets++;
    const [, prefix, namespace, plural, name] = m as unknown as [string, string, string, string, string];
    const key = `${namespace}/${name}`;
    const behaviour = this.getBehaviour.get(key) ?? this.defaultGetBehaviour;
    this.maxGetsInFlight = Math.max(this.maxGetsInFlight, ++this.getsInFlight);
    let done = false;
    const finished = (): void => {
      if (!done) (done = true), this.getsInFlight--;
    };
    res.on('close', finished);
    const answer = (): void => {
      finished();
      if (res.destroyed) return;
      const obj = this.collections.get(`${prefix}/${plural}`)?.items.find((o) => sameName(o, { namespace, name })) ?? this.getOnly.get(key);
      if (behaviour.status) json(behaviour.status, behaviour.body ?? { kind: 'Status', code: behaviour.status });
      else if (obj) json(200, obj);
      else json(404, { kind: 'Status', reason: 'NotFound', code: 404, details: { name } });
    };
    if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs).unref();
    else answer();
  }
}

const sameName = (obj: Obj, meta: Obj): boolean => {
  const m = obj.metadata as Obj | undefined;
  return m?.namespace === meta.namespace && m?.name === meta.name;
};

export async function until(cond: () => boolean, what: string, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
