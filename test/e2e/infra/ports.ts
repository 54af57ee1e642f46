// Ports for the test processes (etcd, kube-apiserver, netattach, NRI, webhooks) to listen on.
//
// A port the kernel hands out for bind(0) comes from the ephemeral range, the same range every
// outgoing connection on the machine takes its local port from. Between picking such a port and
// the child process binding it, any connection (the API server to etcd, a client to a webhook)
// can take it, and the child dies with EADDRINUSE: one full e2e run failed so. So ports are
// picked at random below the ephemeral range, where no connection takes a local port, checked
// free by binding them, and never handed out twice by this process.
import { readFileSync } from 'node:fs';
import net from 'node:net';

const LOWEST = 10_000;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (32768 when it cannot be read). */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** A port on 127.0.0.1 that is free now, below the ephemeral range, not handed out before. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found in ${LOWEST}-${high - 1}`);
}

/** n distinct free ports. */
export async function distinctFreePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) ports.push(await freePort());
  return ports;
}
