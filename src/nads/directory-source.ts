// NADs from a directory of manifests (`--nads DIR`), kept current by watching it.
// Each scan re-reads only files whose size or mtime changed; a file that cannot be read or
// parsed is logged and keeps its last good content (a half-written save must not make NADs
// vanish), other files are unaffected. ConfigMap volumes (`..data` symlink swaps) work because
// any change in the directory triggers a full scan.
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { nadObjectsFromText } from './documents.js';
import { silentLogger, type NadLogger, type NadSourceEventHandler } from './logger.js';
import { nadFromObject } from './model.js';
import { nadKey, type Nad, type NadLookup, type NadSource } from './types.js';

export interface DirectoryNadSourceOptions {
  logger?: NadLogger;
  /** Quiet time after the last change before rescanning (editors write in several steps). */
  debounceMs?: number;
  /** Full rescan interval, a safety net for missed watch events; 0 disables. */
  resyncIntervalMs?: number;
  /** Delay before re-creating a failed watcher. */
  rewatchDelayMs?: number;
  resourceNameKeys?: readonly string[];
  onEvent?: NadSourceEventHandler;
}

const EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

interface FileEntry {
  mtimeMs: number;
  size: number;
  nads: Nad[];
}

export class DirectoryNadSource implements NadSource {
  readonly kind = 'directory' as const;
  readonly dir: string;
  readonly #log: NadLogger;
  readonly #opts: Required<Omit<DirectoryNadSourceOptions, 'logger' | 'onEvent' | 'resourceNameKeys'>>;
  readonly #resourceNameKeys: readonly string[] | undefined;
  readonly #onEvent: NadSourceEventHandler;
  #files = new Map<string, FileEntry>();
  #nads = new Map<string, Nad>();
  #synced = false;
  #stopped = true;
  #watcher: FSWatcher | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #resync: NodeJS.Timeout | undefined;
  #rewatch: NodeJS.Timeout | undefined;
  #scanning: Promise<void> | undefined;
  #rescanRequested = false;

  constructor(dir: string, options: DirectoryNadSourceOptions = {}) {
    this.dir = dir;
    this.#log = options.logger ?? silentLogger;
    this.#opts = {
      debounceMs: options.debounceMs ?? 200,
      resyncIntervalMs: options.resyncIntervalMs ?? 60_000,
      rewatchDelayMs: options.rewatchDelayMs ?? 1_000,
    };
    this.#resourceNameKeys = options.resourceNameKeys;
    this.#onEvent = options.onEvent ?? (() => {});
  }

  /** Scans once (rejects when the directory cannot be read), then watches. */
  async start(): Promise<void> {
    const info = await stat(this.dir).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`NAD directory ${this.dir}: ${e.code ?? e.message}`);
    });
    if (!info.isDirectory()) throw new Error(`NAD directory ${this.dir}: not a directory`);
    this.#stopped = false;
    await this.rescan();
    this.#startWatcher();
    if (this.#opts.resyncIntervalMs > 0) {
      this.#resync = setInterval(() => void this.rescan(), this.#opts.resyncIntervalMs);
      this.#resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    for (const t of [this.#debounce, this.#resync, this.#rewatch]) if (t) clearTimeout(t);
    await this.#scanning;
  }

  synced(): boolean {
    return this.#synced;
  }
  size(): number {
    return this.#nads.size;
  }
  get(namespace: string, name: string): Nad | undefined {
    return this.#nads.get(nadKey(namespace, name));
  }
  async lookup(namespace: string, name: string): Promise<NadLookup> {
    const nad = this.get(namespace, name);
    if (nad) return { status: 'found', nad };
    if (!this.#synced) return { status: 'unavailable', reason: `NAD directory ${this.dir} not read yet` };
    return { status: 'not-found' };
  }
  list(): Nad[] {
    return [...this.#nads.values()];
  }

  /** Re-reads the directory now; concurrent calls share one scan plus at most one follow-up. */
  rescan(): Promise<void> {
    if (this.#scanning) {
      this.#rescanRequested = true;
      return this.#scanning;
    }
    this.#scanning = (async () => {
      try {
        do {
          this.#rescanRequested = false;
          await this.#scan();
        } while (this.#rescanRequested && !this.#stopped);
      } finally {
        this.#scanning = undefined;
      }
    })();
    return this.#scanning;
  }

  #startWatcher(): void {
    if (this.#stopped) return;
    try {
      this.#watcher = watch(this.dir, { persistent: false }, () => this.#changed());
      this.#watcher.on('error', (e) => this.#watchFailed(e));
    } catch (e) {
      this.#watchFailed(e);
    }
  }

  #watchFailed(e: unknown): void {
    this.#log.error({ dir: this.dir, err: errorText(e) }, 'NAD directory watch failed; retrying');
    this.#onEvent({ type: 'error', outcome: 'watch' });
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#stopped) return;
    this.#rewatch = setTimeout(() => {
      this.#startWatcher();
      void this.rescan();
    }, this.#opts.rewatchDelayMs);
    this.#rewatch.unref();
  }

  #changed(): void {
    if (this.#stopped) return;
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => void this.rescan(), this.#opts.debounceMs);
  }

  async #scan(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => !n.startsWith('.') && EXTENSIONS.has(extname(n).toLowerCase())).sort();
    } catch (e) {
      // Keep serving the last good set: an unmounted volume is not "every NAD was deleted".
      this.#log.error({ dir: this.dir, err: errorText(e) }, 'cannot list the NAD directory; keeping the NADs read before');
      this.#onEvent({ type: 'error', outcome: 'read' });
      return;
    }
    const files = new Map<string, FileEntry>();
    for (const name of names) {
      const entry = await this.#readFile(name);
      if (entry) files.set(name, entry);
    }
    this.#files = files;
    this.#publish();
  }

  async #readFile(name: string): Promise<FileEntry | undefined> {
    const path = join(this.dir, name);
    const previous = this.#files.get(name);
    try {
      const info = await stat(path); // follows symlinks (ConfigMap volumes)
      if (!info.isFile()) return undefined;
      if (previous && previous.mtimeMs === info.mtimeMs && previous.size === info.size) return previous;
      const parsed = nadObjectsFromText(await readFile(path, 'utf8'), extname(name).toLowerCase() === '.json');
      if (!parsed.ok) {
        this.#log.warn({ file: path, err: parsed.error, keptPrevious: previous !== undefined }, 'cannot parse NAD file; ignored');
        this.#onEvent({ type: 'error', outcome: 'read' });
        return previous;
      }
      const nads = parsed.nads.map((o) => nadFromObject(o, { resourceNameKeys: this.#resourceNameKeys }));
      for (const nad of nads) {
        if (nad.problems.length > 0)
          this.#log.warn({ file: path, nad: nadKey(nad.namespace, nad.name), problems: nad.problems }, 'NAD has problems');
      }
      this.#log.debug({ file: path, nads: nads.length, skipped: parsed.skipped }, 'read NAD file');
      return { mtimeMs: info.mtimeMs, size: info.size, nads };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Removed between readdir and read: simply gone.
      if (code === 'ENOENT') return undefined;
      this.#log.warn({ file: path, err: errorText(e) }, 'cannot read NAD file; ignored');
      this.#onEvent({ type: 'error', outcome: 'read' });
      return previous;
    }
  }

  #publish(): void {
    const next = new Map<string, Nad>();
    const origin = new Map<string, string>();
    for (const [file, entry] of this.#files) {
      for (const nad of entry.nads) {
        const k = nadKey(nad.namespace, nad.name);
        const first = origin.get(k);
        if (first !== undefined) this.#log.warn({ nad: k, files: [first, file] }, 'NAD defined in two files; the later file wins');
        next.set(k, nad);
        origin.set(k, file);
      }
    }
    if (this.#synced) {
      for (const [k, nad] of next) {
        const old = this.#nads.get(k);
        if (!old) this.#onEvent({ type: 'add' });
        else if (old !== nad) this.#onEvent({ type: 'update' });
      }
      for (const k of this.#nads.keys()) if (!next.has(k)) this.#onEvent({ type: 'delete' });
    }
    this.#nads = next;
    this.#synced = true;
    this.#onEvent({ type: 'sync' });
  }
}

const errorText = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  return err?.code ?? (e instanceof Error ? e.message : String(e));
};
