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
