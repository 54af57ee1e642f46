// Describing a failed API request in a log line or a reason shown to users: the status code and
// the Status object's reason and message, or the socket error code. Never a body or a header.
import { KubeRequestError } from './transport.js';

export function describeKubeError(err: unknown): string {
  if (err instanceof KubeRequestError) {
    const status = [err.reason, err.detail].filter((v) => v !== undefined && v !== '').join(': ');
    return `HTTP ${err.statusCode}${status ? ` (${status})` : ''}`;
  }
  if (typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string')
    return (err as { code: string }).code;
  if (err instanceof Error) {
    const first = err.message.split('\n')[0]!;
    return err.name === 'Error' ? first : `${err.name}: ${first}`;
  }
  return String(err);
}
