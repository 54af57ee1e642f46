/**
 * A small round-robin TCP proxy for the e2e suite (test infrastructure, not a product part): the
 * kube-apiserver calls one webhook URL and the proxy spreads its TCP connections over several
 * netattach processes, as a Service spreads them over replicas. TLS passes through untouched.
 * A backend that refuses the connection (killed) is skipped for that connection.
 */
import net from 'node:net';

export class RoundRobinProxy {
  readonly connections: number[];
  private next = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.accept(client));

  constructor(private readonly backends: number[]) {
    this.connections = backends.map(() => 0);
  }

  async start(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this.port;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket, tried = 0, start = this.next++): void {
    if (tried === 0) {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      client.pause();
    }
    if (tried >= this.backends.length) return void client.destroy();
    const i = (start + tried) % this.backends.length;
    const upstream = net.connect(this.backends[i]!, '127.0.0.1');
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.connections[i]!++;
      this.sockets.add(upstream);
      upstream.on('close', () => this.sockets.delete(upstream));
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client);
      client.resume();
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    upstream.on('error', () => {
      if (!connected) this.accept(client, tried + 1, start);
      else client.destroy();
    });
  }

  /** Cuts every connection: the client must dial again, and its new connections spread over the backends. */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * A Service as kube-proxy makes one, for the rolling-upgrade e2e: new connections go round-robin
 * to the current endpoint set (the ready, not terminating replicas, set by the caller with
 * whatever lag it models); an established connection stays with its backend after that backend
 * leaves the set (conntrack). Unlike RoundRobinProxy it never tries another backend: a backend
 * that refuses is a refused connection for the client (iptables DNAT has no second choice), and an
 * empty set refuses every connection (kube-proxy's REJECT rule). Both are counted.
 */
export class ServiceProxy {
  /** Every change of the endpoint set, in order. */
  readonly history: Array<{ at: number; endpoints: number[] }> = [];
  /** Connections sent to a backend that refused them. */
  readonly refused: Array<{ port: number; at: number }> = [];
  /** Connections that found the endpoint set empty. */
  readonly rejected: number[] = [];
  /** Connections made, by backend port. */
  readonly connections = new Map<number, number>();
  /** Arrival times of the chunks each backend sent back (its answers), by backend port. */
  readonly answered = new Map<number, number[]>();
  private endpoints: number[] = [];
  private next = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.accept(client));

  constructor(endpoints: number[]) {
    this.setEndpoints(endpoints);
  }

  async start(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as net.AddressInfo).port;
  }

  get current(): number[] {
    return [...this.endpoints];
  }

  setEndpoints(ports: number[]): void {
    this.endpoints = [...ports];
    this.history.push({ at: Date.now(), endpoints: [...ports] });
  }

  private accept(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.endpoints.length === 0) {
      this.rejected.push(Date.now());
      return void client.destroy();
    }
    client.pause();
    const port = this.endpoints[this.next++ % this.endpoints.length]!;
    const upstream = net.connect(port, '127.0.0.1');
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.connections.set(port, (this.connections.get(port) ?? 0) + 1);
      this.sockets.add(upstream);
      const answers = this.answered.get(port) ?? [];
      this.answered.set(port, answers);
      upstream.on('data', () => answers.push(Date.now()));
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client);
      client.resume();
      client.on('close', () => upstream.destroy());
    });
    upstream.on('error', () => {
      if (!connected) this.refused.push({ port, at: Date.now() });
      client.destroy();
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
