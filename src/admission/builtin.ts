// The built-in rules: the NAD exists, and it can honour what the selection asks of it.
// They are Findings with action Enforce so that a policy can re-grade them.
import type { ParsedNetwork } from '../annotation/types.js';
import { child, forbidden, notFound, type FieldError } from '../field/index.js';
import type { Capability, NadLookup } from '../nads/types.js';
import type { Finding } from '../policy/types.js';
import type { Note } from './warnings.js';

/** Selection keys that reach the plugins as runtimeConfig, and the capability each needs. */
const CAPABILITY_KEYS: ReadonlyArray<readonly [keyof ParsedNetwork['selection'] & string, Capability]> = [
  ['ips', 'ips'],
  ['mac', 'mac'],
  ['infiniband-guid', 'infinibandGUID'],
  ['portMappings', 'portMappings'],
  ['bandwidth', 'bandwidth'],
];

export interface BuiltinResult {
  /** Action Enforce, for the policy to re-grade. */
  findings: Finding[];
  /** Lookups that could not be answered, as Warn findings (the caller may deny instead). */
  unverified: Array<Finding & { ref: string; reason: string }>;
  /** Checks that were skipped, and why. */
  warnings: Note[];
}

const enforce = (rule: Finding['rule'], error: FieldError): Finding => ({ policy: 'builtin', rule, action: 'Enforce', error });

export function builtinChecks(networks: readonly ParsedNetwork[], nads: (ns: string, name: string) => NadLookup): BuiltinResult {
  const out: BuiltinResult = { findings: [], unverified: [], warnings: [] };
  for (const net of networks) {
    const { namespace, name } = net.selection;
    const ref = `${namespace}/${name}`;
    const lookup = nads(namespace, name);
    if (lookup.status === 'not-found') {
      out.findings.push(
        enforce('networkExists', notFound(net.path, ref, 'no such NetworkAttachmentDefinition')),
      );
      continue;
    }
    if (lookup.status === 'unavailable') {
      // Not the same as absent, so not a networkExists finding a policy could re-grade; the
      // caller decides: a Pod CREATE is denied (503), a template or an update only warned.
      out.unverified.push({
        policy: 'builtin',
        rule: 'networkExists',
        action: 'Warn',
        error: { path: net.path, type: 'Internal error', reason: `${ref} could not be checked: ${lookup.reason}` },
        ref,
        reason: lookup.reason,
      });
      continue;
    }
    const { nad } = lookup;
    for (const [selKey, capability] of CAPABILITY_KEYS) {
      if (net.selection[selKey] === undefined) continue;
      const path = child(net.path, selKey);
      if (!nad.cni) {
        out.warnings.push({ path, text: `"${capability}" unchecked: ${ref} has no readable CNI config` });
        continue;
      }
      if (!nad.cni.capabilities.has(capability)) {
        out.findings.push(
          enforce(
            'capabilities',
            forbidden(path, `no CNI plugin of ${ref} declares capability "${capability}", so the value would be ignored`),
          ),
        );
      }
    }
  }
  return out;
}
