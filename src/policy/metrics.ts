// Prometheus metrics of policy loading and of the uniqueness index, registered in the server's
// registry. Findings are not counted here: the server counts them once per review, from the
// final decision (netattach_policy_findings_total{endpoint,policy,rule,action}).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AddressIndex, ReservationCap } from './address-index.js';

export interface PolicyMetrics {
  /** A source put a new set in force. */
  loaded(source: string, count: number): void;
  /** A document was rejected (and ignored). */
  invalid(source: string, policy: string | undefined): void;
  /** Reports the address index size on every scrape. */
  watchIndex(index: AddressIndex): void;
}

export function registerPolicyMetrics(registry: Registry): PolicyMetrics {
  const registers = [registry];
  const loaded = new Gauge({
    name: 'netattach_policies_loaded',
    help: 'Policies in force, by source.',
    labelNames: ['source'] as const,
    registers,
  });
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
  // Counted from the index's own totals at each scrape (the index knows no registry).
  const counted: Record<ReservationCap, number> = { pod: 0, address: 0, namespace: 0, total: 0 };
  const capped = new Counter({
    name: 'netattach_address_reservations_capped_total',
    help: 'Reservations at their bounds: cap="pod" addresses of a pod past the first 64, not reserved; "address", "namespace", "total" unexpired reservations evicted (the oldest) to make room.',
    labelNames: ['cap'] as const,
    registers,
    collect() {
      if (!index) return;
      const now = index.reservationsCapped();
      for (const cap of Object.keys(counted) as ReservationCap[]) {
        if (now[cap] > counted[cap]) this.inc({ cap }, now[cap] - counted[cap]);
        counted[cap] = now[cap];
      }
    },
  });
  for (const cap of Object.keys(counted) as ReservationCap[]) capped.inc({ cap }, 0);
  return {
    loaded: (source, count) => loaded.set({ source }, count),
    invalid: (source, policy) => invalid.inc({ source, policy: policy ?? '' }),
    watchIndex: (i) => void (index = i),
  };
}
