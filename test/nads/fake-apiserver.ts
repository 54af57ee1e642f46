// A tiny stand-in for kube-apiserver's NAD endpoints: list, watch (a chunked stream of JSON
// lines) and GET, with knobs for failures and delays.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

const BASE = '/apis/k8s.cni.cncf.io/v1';
type Obj = Record<string, unknown>;

export interface GetBehaviour {
  status?: number;
  delayMs?: number;
  body?: unknown;
}

export class FakeApiServer {
  readonly listed = new Map<string, Obj>();
  /** Served by GET only: created "a moment ago", not yet seen by the watch. */
  readonly getOnly = new Map<string, Obj>();
  readonly getBehaviour = new Map<string, GetBehaviour>();
  listFailures = 0;
  watchFailures = 0;
  endWatchesAtOnce = false;
  lists = 0;
  /** Requests for list pages (several per list when paginated). */
  watches = 0;
  gets = 0;
  authorizations: string[] = [];
  #resourceVersion = 100;
  #watchers = new Set<ServerResponse>();
  #server: Server;

  constructor() {
    this.#server = createServer((req, res) => this.#handle(req, res));
  }

  async listen(): Promise<KubeConfig> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'test-token' }],
      contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
      currentContext: 'c',
    });
    return kc;
  }

  async close(): Promise<void> {
    for (const w of this.#watchers) w.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  add(obj: Obj): void {
    const meta = obj.metadata as Obj;
    meta.resourceVersion = String(++this.#resourceVersion);
    this.listed.set(`${String(meta.namespace)}/${String(meta.name)}`, obj);
    this.#push('ADDED', obj);
  }

  remove(namespace: string, name: string): void {
    const obj = this.listed.get(`${namespace}/${name}`);
    if (!obj) return;
    this.listed.delete(`${namespace}/${name}`);
    (obj.metadata as Obj).resourceVersion = String(++this.#resourceVersion);
    this.#push('DELETED', obj);
  }

  /** Cuts every open watch connection mid-stream. */
  dropWatches(): void {
    for (const w of this.#watchers) w.socket?.destroy();
    this.#watchers.clear();
  }

  openWatches(): number {
    return this.#watchers.size;
  }

  #push(type: string, object: Obj): void {
    for (const w of this.#watchers) w.write(`${JSON.stringify({ type, object })}\n`);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    this.authorizations.push(req.headers.authorization ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === `${BASE}/network-attachment-definitions`) {
      if (url.searchParams.get('watch') === 'true') {
        this.watches++;
        if (this.watchFailures > 0) {
          this.watchFailures--;
          return json(500, { kind: 'Status', reason: 'InternalError', message: 'watch failed' });
        }
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        if (this.endWatchesAtOnce) return void res.end();
        res.flushHeaders();
        this.#watchers.add(res);
        res.on('close', () => this.#watchers.delete(res));
        return;
      }
      this.lists++;
      if (this.listFailures > 0) {
        this.listFailures--;
        return json(500, { kind: 'Status', reason: 'InternalError', message: 'etcd is sad' });
      }
      const all = [...this.listed.values()];
      const from = Number(url.searchParams.get('continue') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? all.length) || all.length;
      const more = from + limit < all.length;
      return json(200, {
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinitionList',
        metadata: { resourceVersion: String(this.#resourceVersion), ...(more ? { continue: String(from + limit) } : {}) },
        items: all.slice(from, from + limit),
      });
    }
    const m = new RegExp(`^${BASE}/namespaces/([^/]+)/network-attachment-definitions/([^/]+)$`).exec(url.pathname);
    if (m) {
      this.gets++;
      const key = `${m[1]}/${m[2]}`;
      const behaviour = this.getBehaviour.get(key) ?? {};
      const answer = (): void => {
        if (res.destroyed) return;
        const obj = this.listed.get(key) ?? this.getOnly.get(key);
        if (behaviour.status) json(behaviour.status, behaviour.body ?? { kind: 'Status', code: behaviour.status });
        else if (obj) json(200, obj);
        else json(404, { kind: 'Status', reason: 'NotFound', code: 404, details: { name: m[2] } });
      };
      if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs).unref();
      else answer();
      return;
    }
    json(404, { kind: 'Status', reason: 'NotFound' });
  }
}
