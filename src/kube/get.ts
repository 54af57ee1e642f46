// One GET with a deadline, for the request path: the answer is a typed outcome, never a throw,
// so a slow or unreachable API server costs at most `timeoutMs` and says why.
import { describeKubeError } from './errors.js';
import { KubeRequestError, type KubeTransport } from './transport.js';

export type GetOutcome =
  | { status: 'ok'; object: unknown }
  | { status: 'not-found' }
  /** `reason`: "the API server did not answer within N ms", or the error (HTTP status, socket code). */
  | { status: 'unavailable'; reason: string; timedOut: boolean };

export interface GetObjectOptions {
  timeoutMs: number;
  /** Gives up early too (e.g. on shutdown). */
  signal?: AbortSignal;
  accept?: string;
}

export async function getObject(transport: KubeTransport, path: string, options: GetObjectOptions): Promise<GetOutcome> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  try {
    return { status: 'ok', object: await transport.getJson(path, {}, options.accept, signal) };
  } catch (err) {
    if (err instanceof KubeRequestError && err.statusCode === 404) return { status: 'not-found' };
    if (deadline.aborted)
      return { status: 'unavailable', reason: `the API server did not answer within ${options.timeoutMs} ms`, timedOut: true };
    return { status: 'unavailable', reason: describeKubeError(err), timedOut: false };
  }
}
