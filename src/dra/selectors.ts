// What a DRA selector says about the `resourceName` attribute network DRA drivers publish
// (`k8s.cni.cncf.io/resourceName`, docs/dra.md), read from its CEL text (pure). Only the certain
// case is recognised: an expression made of `&&` conjuncts, one of which is an equality of that
// attribute with a string literal. Anything else (`||`, `!`, `?:`, no such equality) says nothing,
// so netattach never concludes from a selector it does not fully understand.
import type { DeviceRequestAlternative, TemplateDevices } from './types.js';

/** The attribute, its quotes matched by back-references to groups `first` and `first + 1`. */
const attribute = (first: number): string =>
  String.raw`device\.attributes\[\s*(["'])k8s\.cni\.cncf\.io` + `\\${first}` + String.raw`\s*\]\s*(?:\.\s*resourceName|\[\s*(["'])resourceName` + `\\${first + 1}` + String.raw`\s*\])`;
const LITERAL = String.raw`(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')`;
const ATTRIBUTE_FIRST = new RegExp(`${attribute(1)}\\s*==\\s*${LITERAL}`, 'g');
const LITERAL_FIRST = new RegExp(`${LITERAL}\\s*==\\s*${attribute(3)}`, 'g');
/** An operator that could make an equality optional: `||`, a negation (not `!=`), a conditional. */
const NOT_A_CONJUNCTION = /\|\||!(?!=)|\?/;
/** Longest expression read: CEL selectors are short; a longer text is not worth the regex time. */
const MAX_EXPRESSION_LENGTH = 10_000;

/**
 * The resourceName values the expressions (ANDed, as a class's and a request's selectors are)
 * require of a device, or undefined when they require none that netattach can be sure of.
 */
export function requiredResourceNames(expressions: readonly string[]): readonly string[] | undefined {
  let out: Set<string> | undefined;
  for (const e of expressions) {
    if (e.length > MAX_EXPRESSION_LENGTH || NOT_A_CONJUNCTION.test(stringsBlanked(e))) continue;
    for (const m of e.matchAll(ATTRIBUTE_FIRST)) (out ??= new Set()).add(m[3] ?? m[4] ?? '');
    for (const m of e.matchAll(LITERAL_FIRST)) (out ??= new Set()).add(m[1] ?? m[2] ?? '');
  }
  return out ? [...out] : undefined;
}

/** The expression with its string literals emptied: an operator inside a literal is not one. */
const stringsBlanked = (e: string): string => e.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The CEL expressions of a `selectors` list (DeviceClass spec, or a device request). */
export function celExpressions(selectors: unknown): string[] {
  if (!Array.isArray(selectors)) return [];
  const out: string[] = [];
  for (const s of selectors) {
    const cel = isObject(s) ? s['cel'] : undefined;
    const expression = isObject(cel) ? cel['expression'] : undefined;
    if (typeof expression === 'string') out.push(expression);
  }
  return out;
}

function alternative(r: Record<string, unknown>): DeviceRequestAlternative | undefined {
  const deviceClassName = r['deviceClassName'];
  if (typeof deviceClassName !== 'string' || deviceClassName === '') return undefined;
  const resourceNames = requiredResourceNames(celExpressions(r['selectors']));
  return { deviceClassName, ...(resourceNames ? { resourceNames } : {}) };
}

/**
 * The device requests of a ResourceClaimTemplate object (`resource.k8s.io/v1`: `exactly`, or
 * `firstAvailable` alternatives), each with the DeviceClasses it may be served from.
 */
export function templateDevices(obj: unknown): TemplateDevices {
  const spec = isObject(obj) ? obj['spec'] : undefined;
  const inner = isObject(spec) ? spec['spec'] : undefined;
  const devices = isObject(inner) ? inner['devices'] : undefined;
  const requests = isObject(devices) ? devices['requests'] : undefined;
  const out: TemplateDevices = { requests: [] };
  if (!Array.isArray(requests)) return out;
  for (const r of requests) {
    if (!isObject(r)) continue;
    const name = typeof r['name'] === 'string' ? r['name'] : '';
    const alternatives: DeviceRequestAlternative[] = [];
    const exactly = r['exactly'];
    if (isObject(exactly)) {
      const a = alternative(exactly);
      if (a) alternatives.push(a);
    }
    const first = r['firstAvailable'];
    if (Array.isArray(first)) for (const sub of first) if (isObject(sub)) {
      const a = alternative(sub);
      if (a) alternatives.push(a);
    }
    out.requests.push({ name, alternatives });
  }
  return out;
}
