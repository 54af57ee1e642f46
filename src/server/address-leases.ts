// What the address Leases' outcomes do to a decision already made: a Lease lost to another
// holder is a uniqueAddresses finding like one the index found (same message); a Lease that could
// not be made denies with 503 (retryable) under Enforce, and only warns or audits otherwise.
import type { Decision } from '../admission/index.js';
import type { FieldError } from '../field/index.js';
import { outcomeFinding, type LeaseOutcome } from '../policy/index.js';

export function settleAddressLeases(decision: Decision, outcomes: readonly LeaseOutcome[], namespace: string): Decision {
  const forbidden: FieldError[] = [];
  const unavailable: FieldError[] = [];
  const findings = [...decision.findings];
  const warnings = [...decision.warnings];
  const audits = [...decision.audits];
  for (const o of outcomes) {
    const r = outcomeFinding(o, namespace);
    if (!r) continue;
    findings.push(r.finding);
    if (r.finding.action === 'Enforce') (r.unavailable ? unavailable : forbidden).push(r.finding.error);
    else if (r.finding.action === 'Warn') warnings.push({ field: r.finding.error });
    else audits.push(r.finding);
  }
  if (forbidden.length === 0 && unavailable.length === 0) return { ...decision, findings, warnings, audits };
  return {
    allowed: false,
    code: forbidden.length > 0 ? 403 : 503,
    errors: [...forbidden, ...unavailable],
    warnings,
    audits,
    findings,
    patch: [],
    addresses: [],
  };
}
