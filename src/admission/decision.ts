// Accumulates what the checks found into one Decision.
import { internal, type FieldError } from '../field/index.js';
import type { HeldAddress, Finding } from '../policy/index.js';
import type { Decision, JsonPatchOperation } from './types.js';
import { mergeSameCause, type Note, type Warning } from './warnings.js';

export class Verdict {
  /** Errors about the object itself (unparseable annotation, malformed object, immutable field): 422. */
  private readonly invalid: FieldError[] = [];
  /** Errors from rules (built-in or policy) the object breaks: 403. */
  private readonly forbidden: FieldError[] = [];
  /** Facts that could not be established now (a NAD lookup that failed): 503, worth a retry. */
  private readonly unavailable: FieldError[] = [];
  readonly warnings: Warning[] = [];
  readonly audits: Finding[] = [];
  readonly findings: Finding[] = [];
  addresses: HeldAddress[] = [];
  patch: JsonPatchOperation[] = [];

  get denied(): boolean {
    return this.invalid.length > 0 || this.forbidden.length > 0 || this.unavailable.length > 0;
  }

  addInvalid(...errors: FieldError[]): this {
    this.invalid.push(...errors);
    return this;
  }

  warnField(...errors: FieldError[]): this {
    for (const field of errors) this.warnings.push({ field });
    return this;
  }

  warnNote(...notes: Note[]): this {
    for (const note of notes) this.warnings.push({ note });
    return this;
  }

  /** A finding with its final action: Enforce denies, Warn warns, Audit is only recorded. */
  addFinding(f: Finding): this {
    this.findings.push(f);
    if (f.action === 'Enforce') this.forbidden.push(f.error);
    else if (f.action === 'Warn') this.warnField(f.error);
    else this.audits.push(f);
    return this;
  }

  /** A finding that denies because something could not be checked now (HTTP 503, retryable). */
  addUnavailable(f: Finding): this {
    this.findings.push(f);
    this.unavailable.push(f.error);
    return this;
  }

  build(): Decision {
    const allowed = !this.denied;
    // Object errors first: they are what the user must fix before any rule can be judged.
    const errors = [...this.invalid, ...this.forbidden, ...this.unavailable];
    // 503 only when a retry alone could succeed; any rule or object error is the answer otherwise.
    const code = this.forbidden.length > 0 ? 403 : this.invalid.length > 0 ? 422 : 503;
    return {
      allowed,
      errors,
      ...(allowed ? {} : { code }),
      // One warning per cause: a chart repeating a mistake on every element gets it said once.
      warnings: mergeSameCause(this.warnings),
      audits: this.audits,
      findings: this.findings,
      patch: allowed ? this.patch : [],
      addresses: allowed ? this.addresses : [],
    };
  }
}

export const allow = (): Decision => new Verdict().build();

/** An unexpected exception, as a denial the server can log and count (never thrown to the shell). */
export function internalError(err: unknown): Decision {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : 'unknown error';
  return {
    allowed: false,
    code: 500,
    errors: [internal('request', `netattach failed to review the request (${message.slice(0, 200)})`)],
    warnings: [],
    audits: [],
    findings: [],
    patch: [],
    addresses: [],
  };
}
