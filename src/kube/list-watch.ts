// A list-then-watch loop that keeps no objects itself: the handler decides what to retain
// (a few fields per pod for the address index). Lists in pages, watches from the list's
// resourceVersion, relists on 410 Gone, reconnects with capped backoff.
import { KubeRequestError, type KubeTransport } from './transport.js';

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
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
  pageSize?: number;
  handler: ListWatchHandler;
  onError?: (err: unknown) => void;
  /** Delay before reconnecting after an error (doubles up to maxBackoffMs). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export class ListWatch {
  private readonly abort = new AbortController();
  private rv = '';
  private syncedOnce = false;
  private firstSync: { resolve: () => void; promise: Promise<void> };
  private loop: Promise<void> | undefined;
  private failure: { message: string; statusCode?: number } | undefined;

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
    let backoff = this.o.backoffMs ?? 1000;
    while (!this.abort.signal.aborted) {
      try {
        if (!this.rv) await this.list();
        await this.o.transport.watch(
          this.o.path,
          { resourceVersion: this.rv, allowWatchBookmarks: 'true', fieldSelector: this.o.fieldSelector, timeoutSeconds: '300' },
          this.o.watchAccept,
          (e) => this.event(e),
          this.abort.signal,
        );
        backoff = this.o.backoffMs ?? 1000;
        this.failure = undefined;
      } catch (err) {
        if (this.abort.signal.aborted) break;
        if (err instanceof KubeRequestError && err.statusCode === 410) this.rv = '';
        this.failure = { message: err instanceof Error ? err.message : String(err), ...(err instanceof KubeRequestError ? { statusCode: err.statusCode } : {}) };
        this.o.onError?.(err);
        await sleep(backoff, this.abort.signal);
        backoff = Math.min(backoff * 2, this.o.maxBackoffMs ?? 30_000);
      }
    }
  }

  private async list(): Promise<void> {
    let cont: string | undefined;
    let rv = '';
    this.o.handler.resync();
    do {
      const page = (await this.o.transport.getJson(
        this.o.path,
        { limit: String(this.o.pageSize ?? 500), continue: cont, fieldSelector: this.o.fieldSelector },
        this.o.listAccept,
        this.abort.signal,
      )) as { metadata?: { resourceVersion?: string; continue?: string }; items?: KubeObject[] };
      for (const item of page.items ?? []) this.o.handler.upsert(item);
      rv ||= page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
    } while (cont && !this.abort.signal.aborted);
    this.o.handler.resynced();
    this.rv = rv;
    this.syncedOnce = true;
    this.failure = undefined;
    this.firstSync.resolve();
  }

  private event(raw: unknown): void {
    const e = raw as { type?: string; object?: KubeObject & { code?: number } };
    const obj = e.object;
    if (!obj) return;
    switch (e.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.o.handler.upsert(obj);
        break;
      case 'DELETED':
        this.o.handler.remove(obj);
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

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
