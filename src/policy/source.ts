// What policy sources share: the set in force, listeners, and the rule that an invalid
// document never replaces the last valid version of the same policy.
import type { CompiledPolicy } from './compile.js';
import { EMPTY_POLICY_SET, policySet, type PolicySet } from './engine.js';
import type { PolicyLoadError } from './load.js';
import type { PolicyLogger } from './log.js';
import type { PolicyMetrics } from './metrics.js';

export interface PolicySource {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The set in force now. */
  current(): PolicySet;
  /** Problems of the last load: documents ignored. */
  errors(): readonly PolicyLoadError[];
  /** Called with every new set (after start, on each change). */
  onChange(listener: (set: PolicySet) => void): void;
}

export interface SourceOptions {
  logger?: PolicyLogger;
  metrics?: PolicyMetrics;
}

/** Keeps the valid version of each policy by name and publishes the set on change. */
export class PolicyStore {
  private byName = new Map<string, CompiledPolicy>();
  private set: PolicySet = EMPTY_POLICY_SET;
  private problems: PolicyLoadError[] = [];
  private readonly listeners: Array<(set: PolicySet) => void> = [];

  constructor(
    private readonly source: string,
    private readonly options: SourceOptions,
  ) {}

  current(): PolicySet {
    return this.set;
  }

  errors(): readonly PolicyLoadError[] {
    return this.problems;
  }

  onChange(listener: (set: PolicySet) => void): void {
    this.listeners.push(listener);
  }

  get(name: string): CompiledPolicy | undefined {
    return this.byName.get(name);
  }

  /**
   * Replaces everything: `valid` policies are in force; an invalid document whose name was in
   * force keeps its previous version; with `keepUnnamed`, policies not mentioned at all are kept
   * too (a document too broken to name its policy may be any of them).
   */
  replaceAll(valid: readonly CompiledPolicy[], errors: readonly PolicyLoadError[], keepUnnamed = false): void {
    const next = new Map<string, CompiledPolicy>();
    for (const p of valid) next.set(p.name, p);
    for (const e of errors) {
      const prev = e.name !== undefined ? this.byName.get(e.name) : undefined;
      if (prev && !next.has(prev.name)) next.set(prev.name, prev);
    }
    if (keepUnnamed) for (const [name, p] of this.byName) if (!next.has(name)) next.set(name, p);
    this.problems = [...errors];
    for (const e of errors) this.report(e);
    this.publish(next);
  }

  upsert(policy: CompiledPolicy): void {
    this.problems = this.problems.filter((e) => e.name !== policy.name);
    const next = new Map(this.byName);
    next.set(policy.name, policy);
    this.publish(next);
  }

  /** An invalid version: reported, the previous valid version (if any) stays. */
  reject(error: PolicyLoadError): void {
    this.problems = [...this.problems.filter((e) => e.name !== error.name), error];
    this.report(error);
  }

  remove(name: string): void {
    this.problems = this.problems.filter((e) => e.name !== name);
    if (!this.byName.has(name)) return;
    const next = new Map(this.byName);
    next.delete(name);
    this.publish(next);
  }

  private report(e: PolicyLoadError): void {
    const kept = e.name !== undefined && this.byName.has(e.name);
    this.options.logger?.warn(
      { source: this.source, policy: e.name, kept },
      `${e.message}; ignored${kept ? ', the previous valid version stays in force' : ''}`,
    );
    this.options.metrics?.invalid(this.source, e.name);
  }

  private publish(next: Map<string, CompiledPolicy>): void {
    this.byName = next;
    this.set = policySet(next.values());
    this.options.metrics?.loaded(this.source, next.size);
    this.options.logger?.info({ source: this.source, policies: [...next.keys()].sort() }, 'policies in force');
    for (const l of this.listeners) l(this.set);
  }
}
