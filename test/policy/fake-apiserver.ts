// A small fake Kubernetes API server for list/watch adapters: paged lists, streaming watches
// the test drives, PATCH recording. Plain HTTP (the kubeconfig says skipTLSVerify).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class FakeApiServer {
  readonly requests: Recorded[] = [];
  private readonly lists = new Map<string, { items: unknown[]; rv: string }>();
  private readonly watchers = new Map<string, Set<http.ServerResponse>>();
  private server = http.createServer((req, res) => void this.handle(req, res));
  patchReply: (path: string, body: unknown) => unknown = (_p, body) => body;

  async start(): Promise<KubeConfig> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const { port } = this.server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'ctx', cluster: 'fake', user: 'u' }],
      currentContext: 'ctx',
    });
    return kc;
  }

  async stop(): Promise<void> {
    for (const set of this.watchers.values()) for (const res of set) res.end();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  setList(path: string, items: unknown[], rv: string): void {
    this.lists.set(path, { items, rv });
  }

  watching(path: string): number {
    return this.watchers.get(path)?.size ?? 0;
  }

  emit(path: string, event: unknown): void {
    for (const res of this.watchers.get(path) ?? []) res.write(JSON.stringify(event) + '\n');
  }

  endWatches(path: string): void {
    for (const res of this.watchers.get(path) ?? []) res.end();
    this.watchers.get(path)?.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    this.requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (req.method === 'PATCH') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(this.patchReply(url.pathname, JSON.parse(body))));
      return;
    }
    const list = this.lists.get(url.pathname);
    if (!list) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', message: 'the server could not find the requested resource' }));
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const set = this.watchers.get(url.pathname) ?? new Set();
      this.watchers.set(url.pathname, set);
      set.add(res);
      res.on('close', () => set.delete(res));
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? '0') || list.items.length;
    const start = Number(url.searchParams.get('continue') ?? '0');
    const items = list.items.slice(start, start + limit);
    const next = start + limit < list.items.length ? String(start + limit) : undefined;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: list.rv, ...(next ? { continue: next } : {}) }, items }));
  }
}

export async function until(cond: () => boolean, what: string, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
