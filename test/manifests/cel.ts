// Evaluates a webhook's matchConditions the way the apiserver does: all true -> the webhook is
// called; any false -> skipped; otherwise (an error) the failurePolicy decides.
import { run, isCelError, type CelInput } from '@bufbuild/cel';

export type MatchOutcome = 'call' | 'skip' | { error: string };

/** JSON (as the apiserver hands objects to CEL) to CEL values: objects become maps. */
export function toCel(v: unknown): CelInput {
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === 'object' && v !== null) return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v as CelInput;
}

export interface AdmissionInput {
  request: { operation: string; resource: { group: string; version: string; resource: string } };
  object: unknown;
  oldObject: unknown;
}

export function evaluate(conditions: Array<{ name: string; expression: string }>, input: AdmissionInput): MatchOutcome {
  const bindings = { request: toCel(input.request), object: toCel(input.object), oldObject: toCel(input.oldObject) };
  let error: string | undefined;
  for (const c of conditions) {
    const result = run(c.expression, bindings);
    if (isCelError(result)) error ??= `${c.name}: ${result.message}`;
    else if (typeof result !== 'boolean') error ??= `${c.name}: not a bool: ${String(result)}`;
    else if (!result) return 'skip';
  }
  return error === undefined ? 'call' : { error };
}
