// What a DRA selector says about the `resourceName` attribute network DRA drivers publish
// (`k8s.cni.cncf.io/resourceName`, docs/dra.md), read from its CEL text (pure). Only the certain
// case is recognised: a whole `&&` conjunct that is an equality of that attribute with a plain
// string literal. Anything else (`||`, `!`, `?:`, comments, escapes, a conjunct holding more) says
// nothing, so netattach never concludes from a selector it does not fully understand. Linear in
// the text, which is bounded: templates come from any namespace editor.
import type { DeviceRequestAlternative, TemplateDevices } from './types.js';

/** The attribute, written either way (`.resourceName` or `["resourceName"]`), quotes matched. */
const ATTRIBUTE = String.raw`device\.attributes\[\s*(?:"k8s\.cni\.cncf\.io"|'k8s\.cni\.cncf\.io')\s*\]\s*(?:\.\s*resourceName|\[\s*(?:"resourceName"|'resourceName')\s*\])`;
/** A literal without escapes (expressions holding a backslash are not read at all). */
const LITERAL = `(?:"([^"]*)"|'([^']*)')`;
/** One whole conjunct: the attribute equal to a literal, or the literal equal to the attribute. */
const ATTRIBUTE_FIRST = new RegExp(String.raw`^\s*${ATTRIBUTE}\s*==\s*${LITERAL}\s*$`);
const LITERAL_FIRST = new RegExp(String.raw`^\s*${LITERAL}\s*==\s*${ATTRIBUTE}\s*$`);
/**
 * What makes an expression unread: an operator that could make an equality optional (`||`, a
 * negation but not `!=`, a conditional), a comment, an escape or a raw or triple-quoted string
 * (their literal is not the text between two quotes).
 */
const UNREAD = /\|\||!(?!=)|\?|\/\/|\\|"""|'''|\b[rRbB]["']/;
/** Longest expression read: CEL selectors are short, and the patterns stay linear below it. */
const MAX_EXPRESSION_LENGTH = 1024;
/** Expressions read per selector list: a class or a request has a few. */
const MAX_EXPRESSIONS = 32;

/**
 * The resourceName values the expressions (ANDed, as a class's and a request's selectors are)
 * require of a device, or undefined when they require none that netattach can be sure of. A
 * requirement is a whole `&&` conjunct of the form `attribute == "literal"` (or reversed): a
 * conjunct that holds more (`rn == "a" == false`, `[rn == "a"].all(...)`, parentheses) says nothing.
 */
export function requiredResourceNames(expressions: readonly string[]): readonly string[] | undefined {
  let out: Set<string> | undefined;
  for (const e of expressions.slice(0, MAX_EXPRESSIONS)) {
    if (e.length > MAX_EXPRESSION_LENGTH || UNREAD.test(stringsBlanked(e)) || /\\|"""|'''/.test(e)) continue;
    for (const conjunct of conjuncts(e)) {
      const m = ATTRIBUTE_FIRST.exec(conjunct) ?? LITERAL_FIRST.exec(conjunct);
      if (m) (out ??= new Set()).add(m[1] ?? m[2] ?? '');
    }
  }
  return out ? [...out] : undefined;
}

/** The expression split at each `&&` outside string literals (no escapes: checked before). */
function conjuncts(e: string): string[] {
  const out: string[] = [];
  let quote = '';
  let from = 0;
  for (let i = 0; i < e.length; i++) {
    const c = e[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '&' && e[i + 1] === '&') {
      out.push(e.slice(from, i));
      from = i + 2;
      i++;
    }
  }
  out.push(e.slice(from));
  return out;
}

/** The expression with its string literals emptied: an operator inside a literal is not one. */
const stringsBlanked = (e: string): string => e.replace(/"[^"]*"|'[^']*'/g, '""');

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

/**
 * Bounds of what is kept of one template (issue 37: a 1 MB template kept 1.1 MB of literals, and
 * 200 of them killed a replica). Kubernetes' own limits: 32 requests, 8 `firstAvailable`
 * alternatives, a class name of 253 and a request name of 63 characters, a string attribute of
 * 64. A kept literal longer than an attribute can be is cut and marked so that it still matches
 * no resourceName; two distinct literals already require the impossible (the conjuncts are ANDed),
 * so more add nothing.
 */
export const TEMPLATE_SUMMARY_LIMITS = {
  requests: 32,
  alternatives: 8,
  className: 253,
  requestName: 63,
  literal: 64,
  literals: 2,
} as const;
/** Ends a cut literal: no resourceName holds it, so a cut requirement never matches one. */
const CUT_MARK = '\u0000';

function alternative(r: Record<string, unknown>): DeviceRequestAlternative | undefined {
  const deviceClassName = r['deviceClassName'];
  if (typeof deviceClassName !== 'string' || deviceClassName === '' || deviceClassName.length > TEMPLATE_SUMMARY_LIMITS.className)
    return undefined;
  const required = requiredResourceNames(celExpressions(r['selectors']));
  const { literal, literals } = TEMPLATE_SUMMARY_LIMITS;
  const resourceNames = required?.slice(0, literals).map((n) => (n.length > literal ? `${n.slice(0, literal)}${CUT_MARK}` : n));
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
  for (const r of requests.slice(0, TEMPLATE_SUMMARY_LIMITS.requests)) {
    if (!isObject(r)) continue;
    const name = typeof r['name'] === 'string' ? r['name'].slice(0, TEMPLATE_SUMMARY_LIMITS.requestName) : '';
    const alternatives: DeviceRequestAlternative[] = [];
    const exactly = r['exactly'];
    if (isObject(exactly)) {
      const a = alternative(exactly);
      if (a) alternatives.push(a);
    }
    const first = r['firstAvailable'];
    if (Array.isArray(first))
      for (const sub of first.slice(0, TEMPLATE_SUMMARY_LIMITS.alternatives))
        if (isObject(sub)) {
          const a = alternative(sub);
          if (a) alternatives.push(a);
        }
    out.requests.push({ name, alternatives });
  }
  return out;
}
