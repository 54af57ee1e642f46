// coordination.k8s.io/v1 Leases in one namespace, as the address Leases use them: an atomic
// create (409 when the name exists), a GET, and a DELETE guarded by uid and resourceVersion
// preconditions (so a replica never deletes a Lease that was re-created or changed meanwhile).
// Every call is bounded by the caller's signal; an answer is data, never a throw, except that
// no answer at all (unreachable, timed out) rejects.
import type { KubeTransport } from './transport.js';

export type CreateResult = { status: 'created'; object: unknown } | { status: 'exists' } | { status: 'failed'; reason: string };
export type GetResult = { status: 'found'; object: unknown } | { status: 'absent' } | { status: 'failed'; reason: string };
/** `changed`: the precondition failed (another replica re-created or changed it). */
export type DeleteResult = { status: 'deleted' | 'absent' | 'changed' } | { status: 'failed'; reason: string };

export interface LeaseApi {
  readonly namespace: string;
  /** The collection path, for the list/watch. */
  readonly path: string;
  create(lease: unknown, signal: AbortSignal): Promise<CreateResult>;
  get(name: string, signal: AbortSignal): Promise<GetResult>;
  delete(name: string, preconditions: { uid: string; resourceVersion?: string }, signal: AbortSignal): Promise<DeleteResult>;
}

const reasonOf = (status: number, body: unknown): string => {
  const message = (body as { message?: unknown } | null)?.message;
  return `HTTP ${status}${typeof message === 'string' ? `: ${message.slice(0, 200)}` : ''}`;
};

/** A connection the server closed under a request (a kept-alive socket to an API server that restarted). */
const droppedConnection = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || (err as Error).message === 'socket hang up';
};

/** One more try on a dropped connection: every call here is idempotent or answered as such (409, 404). */
async function once<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (signal.aborted || !droppedConnection(err)) throw err;
    return call();
  }
}

export function leaseApi(transport: KubeTransport, namespace: string): LeaseApi {
  const write = transport.send?.bind(transport);
  if (!write) throw new Error('the Kubernetes transport cannot write');
  const send: typeof write = (method, path, body, signal) => once(() => write(method, path, body, signal), signal);
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const one = (name: string): string => `${path}/${encodeURIComponent(name)}`;
  return {
    namespace,
    path,
    async create(lease, signal) {
      const r = await send('POST', path, lease, signal);
      if (r.status === 201 || r.status === 200) return { status: 'created', object: r.body };
      if (r.status === 409) return { status: 'exists' };
      return { status: 'failed', reason: reasonOf(r.status, r.body) };
    },
    async get(name, signal) {
      const body = await once(() => transport.getJson(one(name), {}, 'application/json', signal), signal).then(
        (object) => ({ status: 'found', object }) as const,
        (err: unknown) => {
          const code = (err as { statusCode?: number }).statusCode;
          if (code === 404) return { status: 'absent' } as const;
          if (code !== undefined) return { status: 'failed', reason: (err as Error).message } as const;
          throw err;
        },
      );
      return body;
    },
    async delete(name, preconditions, signal) {
      const r = await send('DELETE', one(name), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions }, signal);
      if (r.status === 200 || r.status === 202) return { status: 'deleted' };
      if (r.status === 404) return { status: 'absent' };
      if (r.status === 409) return { status: 'changed' };
      return { status: 'failed', reason: reasonOf(r.status, r.body) };
    },
  };
}
