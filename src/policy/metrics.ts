// Prometheus metrics of policy evaluation and loading, registered in the server's registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PolicyInput, PolicyResult } from './types.js';
import type { EvaluationObserver } from './engine.js';
import type { AddressIndex } from './address-index.js';

export interface PolicyMetrics extends EvaluationObserver {
  /** A source put a new set in force. */
  loaded(source: string, count: number): void;
  /** A document was rejected (and ignored). */
  invalid(source: string, policy: string | undefined): void;
  /** Reports the address index size on every scrape. */
  watchIndex(index: AddressIndex): void;
}

export function registerPolicyMetrics(registry: Registry): PolicyMetrics {
  const registers = [registry];
  const findings = new Counter({
    name: 'netattach_policy_findings_total',
    help: 'Policy findings by policy, rule and action (built-in rules under policy "builtin").',
    labelNames: ['policy', 'rule', 'action'] as const,
    registers,
  });
  const evaluations = new Counter({ name: 'netattach_policy_evaluations_total', help: 'Policy evaluations.', registers });
  const loaded = new Gauge({ name: 'netattach_policies_loaded', help: 'Policies in force, by source.', labelNames: ['source'] as const, registers });
  const invalid = new Counter({
    name: 'netattach_policy_invalid_total',
    help: 'Policy documents rejected as invalid (the previous valid version, if any, stays in force).',
    labelNames: ['source', 'policy'] as const,
    registers,
  });
  let index: AddressIndex | undefined;
  new Gauge({
    name: 'netattach_address_index_entries',
    help: 'Uniqueness index: live pods holding addresses, distinct addresses, pending reservations.',
    labelNames: ['entry'] as const,
    registers,
    collect() {
      if (!index) return;
      const s = index.stats();
      this.set({ entry: 'pods' }, s.pods);
      this.set({ entry: 'addresses' }, s.addresses);
      this.set({ entry: 'reservations' }, s.reservations);
    },
  });
  return {
    observe(result: PolicyResult, _input: PolicyInput) {
      evaluations.inc();
      for (const f of result.findings) findings.inc({ policy: f.policy, rule: f.rule, action: f.action });
    },
    loaded: (source, count) => loaded.set({ source }, count),
    invalid: (source, policy) => invalid.inc({ source, policy: policy ?? '' }),
    watchIndex: (i) => void (index = i),
  };
}
