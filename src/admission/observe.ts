// Observe mode (`serve --enforcement=observe`), for rolling netattach out on a live cluster:
// nothing is denied. A decision that would deny becomes an admission with the denial's reasons
// as warnings; the server logs and counts it, and the background audit reports the pod once it
// runs.
//
// Mutation: a denial carries no patch (Verdict.build drops it), and it stays dropped. A pod that
// would be denied is admitted exactly as sent: no resources, no nodeSelector injected. A patch
// computed next to a failed check (a nodeSelector conflict, a bad quantity) could be partial;
// admitting the pod unchanged is what the cluster did before netattach, and never a broken patch.
// Pods that pass are mutated as in enforce mode.
import type { Decision } from './types.js';
import type { Warning } from './warnings.js';

export type Enforcement = 'enforce' | 'observe';
export const ENFORCEMENT_MODES: readonly Enforcement[] = ['enforce', 'observe'];

export const OBSERVE_NOTE = 'netattach observe mode: would be denied; admitted unchanged';

/** The decision observe mode answers with: allowed, the would-be denial's reasons first among the warnings. */
export function observed(decision: Decision): Decision {
  if (decision.allowed) return decision;
  const reasons: Warning[] = decision.errors.map((field) => ({ field }));
  const { code: _code, ...rest } = decision;
  return {
    ...rest,
    allowed: true,
    errors: [],
    warnings: [{ note: { path: '', text: `${OBSERVE_NOTE} (HTTP ${decision.code ?? 403})` } }, ...reasons, ...decision.warnings],
    patch: [],
    addresses: [],
  };
}
