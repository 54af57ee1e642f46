// A list-then-watch loop that keeps no objects itself: the handler decides what to retain
// (a few fields per pod for the address index, a parsed entry per NAD). Lists in pages, watches
// from the list's resourceVersion, relists on 410 Gone, reconnects with capped backoff.
import type { ListEnvelope } from './list-stream.js';
import { KubeRequestError, type KubeTransport } from './transport.js';

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
}

export interface KubeObject {
  metadata?: ObjectMeta;
  [k: string]: unknown;
}

export interface ListWatchHandler {
  /** A relist starts: objects not upserted before `resynced` are gone. */
  resync(): void;
  upsert(obj: KubeObject): void;
  remove(obj: KubeObject): void;
  resynced(): void;
}

export interface ListWatchOptions {
  transport: KubeTransport;
  path: string;
  listAccept: string;
  watchAccept: string;
  fieldSelector?: string;
  labelSelector?: string;
  pageSize?: number;
  handler: ListWatchHandler;
  /** Called for each failed attempt, before waiting `retry.delayMs`. */
  onError?: (err: unknown, retry: RetryInfo) => void;
  /** Delay before reconnecting after an error (doubles up to maxBackoffMs; reset once a list or a watch event arrives). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A watch that ends sooner than this after it opened counts as a failure (no hot loop against a server that ends watches at once). Default 0: off. */
  minWatchMs?: number;
  /** Deadline of each list page (default: none beyond the transport's idle timeout). */
  pageTimeoutMs?: number;
}

export interface RetryInfo {
  /** Consecutive failures so far, this one included. */
  attempt: number;
  delayMs: number;
}

export class ListWatch {
  private readonly abort = new AbortController();
  private rv = '';
  private syncedOnce = false;
  private firstSync: { resolve: () => void; promise: Promise<void> };
  private loop: Promise<void> | undefined;
  private failure: { message: string; statusCode?: number } | undefined;
  private failures = 0;
  /** When the current run of failures began (ms since epoch); undefined while healthy. */
  private failingSince: number | undefined;

  constructor(private readonly o: ListWatchOptions) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.firstSync = { resolve, promise };
  }

  /** Starts the loop; resolves after the first complete list. */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.firstSync.promise;
  }

  synced(): boolean {
    return this.syncedOnce;
  }

  /**
   * Since when the cache may be stale (ms since epoch): the first failure of the current run of
   * failures; undefined while the list/watch works.
   */
  staleSince(): number | undefined {
    return this.syncedOnce ? this.failingSince : undefined;
  }

  /** The error of the last attempt, while the loop keeps retrying; cleared by a successful list or watch. */
  lastFailure(): { message: string; statusCode?: number } | undefined {
    return this.failure;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.firstSync.resolve();
    await this.loop;
  }

  private async run(): Promise<void> {
    const minWatchMs = this.o.minWatchMs ?? 0;
    while (!this.abort.signal.aborted) {
      try {
        if (!this.rv) await this.list();
        const opened = Date.now();
        await this.o.transport.watch(
          this.o.path,
          {
            resourceVersion: this.rv,
            allowWatchBookmarks: 'true',
            fieldSelector: this.o.fieldSelector,
            labelSelector: this.o.labelSelector,
            timeoutSeconds: '300',
          },
          this.o.watchAccept,
          (e) => this.event(e),
          this.abort.signal,
          // Accepted: the cache is current again (the backoff resets only once the watch delivers or lasts).
          () => ((this.failure = undefined), (this.failingSince = undefined)),
        );
        if (this.abort.signal.aborted) break;
        if (Date.now() - opened < minWatchMs) throw new Error('the watch ended right after it started');
        this.healthy();
      } catch (err) {
        if (this.abort.signal.aborted) break;
        if (err instanceof KubeRequestError && err.statusCode === 410) this.rv = '';
        this.failure = {
          message: err instanceof Error ? err.message : String(err),
          ...(err instanceof KubeRequestError ? { statusCode: err.statusCode } : {}),
        };
        this.failingSince ??= Date.now();
        const delayMs = Math.min((this.o.backoffMs ?? 1000) * 2 ** this.failures, this.o.maxBackoffMs ?? 30_000);
        this.failures++;
        this.o.onError?.(err, { attempt: this.failures, delayMs });
        await sleep(delayMs, this.abort.signal);
      }
    }
  }

  private async list(): Promise<void> {
    let cont: string | undefined;
    let rv = '';
    this.o.handler.resync();
    do {
      const signal = this.o.pageTimeoutMs
        ? AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.o.pageTimeoutMs)])
        : this.abort.signal;
      const page = await listPage(
        this.o.transport,
        this.o.path,
        { limit: String(this.o.pageSize ?? 500), continue: cont, fieldSelector: this.o.fieldSelector, labelSelector: this.o.labelSelector },
        this.o.listAccept,
        (item) => this.o.handler.upsert(item as KubeObject),
        signal,
      );
      rv ||= page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
    } while (cont && !this.abort.signal.aborted);
    this.o.handler.resynced();
    this.rv = rv;
    this.syncedOnce = true;
    this.healthy();
    this.firstSync.resolve();
  }

  private healthy(): void {
    this.failures = 0;
    this.failure = undefined;
    this.failingSince = undefined;
  }

  private event(raw: unknown): void {
    const e = raw as { type?: string; object?: KubeObject & { code?: number } };
    const obj = e.object;
    if (!obj) return;
    switch (e.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.o.handler.upsert(obj);
        this.healthy(); // the watch delivers: healthy again
        break;
      case 'DELETED':
        this.o.handler.remove(obj);
        this.healthy();
        break;
      case 'BOOKMARK':
        this.healthy();
        break;
      case 'ERROR':
        // 410 Gone: our resourceVersion is too old; the stream ends and the loop relists.
        if (obj.code === 410) this.rv = '';
        return;
    }
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.rv = rv;
  }
}

/**
 * One page of a list, each item handed to `onItem`: streamed where the transport can (only one
 * item held at a time), else read whole through `getJson` (test doubles).
 */
export async function listPage(
  transport: KubeTransport,
  path: string,
  query: Record<string, string | undefined>,
  accept: string,
  onItem: (item: unknown) => void,
  signal?: AbortSignal,
): Promise<ListEnvelope> {
  if (transport.list) return transport.list(path, query, accept, onItem, signal);
  const page = (await transport.getJson(path, query, accept, signal)) as ListEnvelope & { items?: unknown[] };
  for (const item of page.items ?? []) onItem(item);
  return page;
}

/**
 * The wait between retries: unref'd, a retry loop alone does not keep the process alive. The
 * abort listener is removed when the timer fires: the loop's one signal outlives every retry, and
 * a listener left per retry was a leak (MaxListenersExceededWarning during an API server outage).
 */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    t.unref();
    signal.addEventListener('abort', onAbort, { once: true });
  });
