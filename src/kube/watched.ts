// What a cache fed by one list/watch shows the rest of the program: its lifecycle and its health,
// all the list/watch's own. The cache supplies the list/watch (built in its constructor, since
// its handler writes into the cache).
import type { KubeCredentials } from './credentials.js';
import type { ListWatch } from './list-watch.js';
import { kubeTransport, type KubeTransport } from './transport.js';

export abstract class WatchedCache {
  protected abstract readonly listWatch: ListWatch;

  /** Resolves after the first full list. */
  start(): Promise<void> {
    return this.listWatch.start();
  }

  stop(): Promise<void> {
    return this.listWatch.stop();
  }

  synced(): boolean {
    return this.listWatch.synced();
  }

  /** Since when (ms since epoch) the cache may be stale (its list/watch is failing); undefined while it works. */
  staleSince(): number | undefined {
    return this.listWatch.staleSince();
  }

  /** Why the list/watch is failing, while it retries (undefined once it works). */
  lastFailure(): { message: string; statusCode?: number } | undefined {
    return this.listWatch.lastFailure();
  }
}

/** The transport given (tests), else one for the credentials; `who` names the cache when there is neither. */
export function transportFor(who: string, kc: KubeCredentials | undefined, transport: KubeTransport | undefined): KubeTransport {
  const chosen = transport ?? (kc ? kubeTransport(kc) : undefined);
  if (!chosen) throw new Error(`${who} needs cluster credentials or a transport`);
  return chosen;
}
