// Policies from a file (`serve --policy FILE`), reloaded when it changes. Watches the directory,
// not the file: editors replace files by rename and ConfigMap volumes swap a `..data` symlink.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { PolicySet } from './engine.js';
import { loadPolicyDocuments, type PolicyLoadError } from './load.js';
import { PolicyStore, type PolicySource, type SourceOptions } from './source.js';

export interface FilePolicySourceOptions extends SourceOptions {
  /** Quiet time after the last change event before reloading (default 200 ms). */
  debounceMs?: number;
}

export class FilePolicySource implements PolicySource {
  private readonly store: PolicyStore;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastText: string | undefined;
  private reloading: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly options: FilePolicySourceOptions = {},
  ) {
    this.store = new PolicyStore(`file:${path}`, options);
  }

  /** Loads the file (rejects if it cannot be read) and starts watching it. */
  async start(): Promise<void> {
    const text = await readFile(this.path, 'utf8');
    this.apply(text);
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), (_event, file) => {
      if (file === null || file === name || String(file).startsWith('..')) this.schedule();
    });
    this.watcher.on('error', (err) => this.options.logger?.error({ err: String(err), path: this.path }, 'policy file watch failed'));
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.watcher?.close();
    await this.reloading;
  }

  current(): PolicySet {
    return this.store.current();
  }

  errors(): readonly PolicyLoadError[] {
    return this.store.errors();
  }

  onChange(listener: (set: PolicySet) => void): void {
    this.store.onChange(listener);
  }

  /** Reads the file again; an unreadable file keeps the policies in force. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(async () => {
      try {
        this.apply(await readFile(this.path, 'utf8'));
      } catch (err) {
        this.options.logger?.warn({ path: this.path, err: String(err) }, 'policy file unreadable; policies in force are kept');
      }
    });
    return this.reloading;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 200);
  }

  private apply(text: string): void {
    if (text === this.lastText) return;
    this.lastText = text;
    const { policies, errors } = loadPolicyDocuments(text, this.path);
    this.store.replaceAll(
      policies,
      errors,
      errors.some((e) => e.name === undefined),
    );
  }
}
