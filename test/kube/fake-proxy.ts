// A small forward proxy for tests: HTTP CONNECT tunnels (https servers) and absolute-URI requests
// (http servers), recording each use and the Proxy-Authorization it got; `requireAuth` answers 407
// without it, `refuseConnect` answers every CONNECT with 403.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxyUse {
  method: string;
  target: string;
  proxyAuthorization?: string;
  /** What the proxy saw of the request's own Authorization (only possible for http servers). */
  authorization?: string;
}

export class FakeProxy {
  readonly uses: ProxyUse[] = [];
  requireAuth: string | undefined;
  refuseConnect = false;
  /** Where a CONNECT to a host name goes (names the test made up): 127.0.0.1 unless mapped otherwise. */
  hosts = new Map<string, string>();
  private readonly sockets = new Set<net.Socket>();
  private readonly server = http.createServer((req, res) => {
    this.uses.push({ method: req.method ?? '', target: req.url ?? '', ...auth(req) });
    if (!this.authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
      return void res.end();
    }
    const upstream = http.request(req.url!, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });

  constructor() {
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      this.uses.push({ method: 'CONNECT', target: req.url ?? '', ...auth(req) });
      if (this.refuseConnect) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      if (!this.authorized(req)) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      const [host, port] = splitHostPort(req.url ?? '');
      const up = net.connect(port, this.hosts.get(host) ?? host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      this.sockets.add(up);
      up.on('close', () => this.sockets.delete(up));
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
  }

  private authorized(req: http.IncomingMessage): boolean {
    return this.requireAuth === undefined || req.headers['proxy-authorization'] === this.requireAuth;
  }

  async start(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this.port;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

const auth = (req: http.IncomingMessage): Pick<ProxyUse, 'proxyAuthorization' | 'authorization'> => ({
  ...(req.headers['proxy-authorization'] ? { proxyAuthorization: req.headers['proxy-authorization'] } : {}),
  ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
});

function splitHostPort(authority: string): [string, number] {
  const i = authority.lastIndexOf(':');
  return [authority.slice(0, i).replace(/^\[|\]$/g, ''), Number(authority.slice(i + 1))];
}
