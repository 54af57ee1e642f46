// The network checks shared by Pods and pod templates: parser errors, built-in rules, policy.
import type { PolicyInput } from '../policy/index.js';
import { sharingOwnerOf, type SharingOwner } from '../policy/index.js';
import { internal } from '../field/index.js';
import type { Verdict } from './decision.js';
import { builtinChecks } from './builtin.js';
import { isObject, stringAt, type JsonObject } from './object.js';
import { resolvable, type PodNetworks } from './networks.js';
import type { AdmissionContext, AdmissionRequest } from './types.js';

export interface JudgeOptions {
  template: boolean;
  namespace: string;
  /** Report errors and Enforce findings as warnings (a change that leaves the networks alone). */
  warnOnly: boolean;
  /** A running pod's networks change (hotplug): what it held before. */
  change?: { heldBefore: ReadonlySet<string> };
  /**
   * The object is not the pod (a KubeVirt VM judged as its launcher pod): the owner its pods will
   * have, and a NAD that cannot be read now only warns, since the pod is checked again when made.
   */
  standIn?: { owner?: SharingOwner };
}

export function judgeNetworks(
  verdict: Verdict,
  nets: PodNetworks,
  pod: JsonObject | undefined,
  request: AdmissionRequest,
  context: AdmissionContext,
  opts: JudgeOptions,
): void {
  const addErrors = opts.warnOnly ? verdict.warnField.bind(verdict) : verdict.addInvalid.bind(verdict);
  // Parser errors are always fatal: Multus would fail the pod at start-up whatever a policy says.
  addErrors(...nets.errors);
  if (nets.networks.length === 0 && nets.raw.size === 0) {
    verdict.warnField(...nets.warnings);
    return;
  }

  const builtin = builtinChecks(resolvable(nets), context.nads, context.config.pluginReads, context.config.multusDefaultNetworks);
  // The annotation alone can only warn ("may collide", "a multicast MAC"); where the NAD's chain
  // makes it a certain failure, the error replaces that warning, as a warning that knows the chain does.
  const decided = new Set([...builtin.errors.map((e) => e.path), ...builtin.supersedes]);
  verdict.warnField(...(decided.size ? nets.warnings.filter((w) => !decided.has(w.path)) : nets.warnings));
  // Certain ADD failures are object errors like the parser's; a policy cannot make them work.
  addErrors(...builtin.errors);
  verdict.warnField(...builtin.fieldWarnings);
  verdict.warnNote(...builtin.warnings);
  // A pod admitted while its NAD cannot be read would start without the device-plugin resources
  // the NAD names (nothing injects them later): deny, retryable. A template's pods, and an update
  // (which never changes the networks), are checked again later, so there it only warns.
  const denyUnavailable = !opts.template && !opts.standIn && request.operation === 'CREATE';
  for (const { ref, reason, ...f } of builtin.unverified) {
    if (denyUnavailable) {
      verdict.addUnavailable({
        ...f,
        action: 'Enforce',
        error: internal(
          f.error.path,
          `${ref} could not be looked up (${reason}); retry: admitted now, the pod would start without the device resources its networks need`,
        ),
      });
      continue;
    }
    // Recorded as a finding (metrics, logs) but worded as a note: it is not a field error.
    verdict.findings.push(f);
    verdict.warnNote({ path: f.error.path, text: f.error.reason });
  }

  const meta = isObject(pod) ? pod['metadata'] : undefined;
  const input: PolicyInput = {
    operation: request.operation,
    namespace: opts.namespace,
    namespaceLabels: context.namespaceLabels ?? {},
    userInfo: request.userInfo,
    pod: {
      ...optional('name', stringAt(meta, 'name') ?? (opts.template ? undefined : request.name)),
      ...optional('generateName', stringAt(meta, 'generateName')),
      ...optional('uid', stringAt(meta, 'uid')),
      ...(opts.template
        ? {}
        : opts.standIn
          ? opts.standIn.owner
            ? { owner: opts.standIn.owner }
            : {}
          : ownerOf(meta, opts.namespace, context)),
    },
    template: opts.template,
    dryRun: request.dryRun === true,
    annotationPath: nets.annotationPath,
    networks: resolvable(nets),
    nads: context.nads,
    builtin: builtin.findings,
    ...(builtin.dropped.length ? { droppedAddresses: new Set(builtin.dropped) } : {}),
    ...(opts.change ? { change: opts.change } : {}),
  };
  const result = context.policy.evaluate(input);
  for (const f of result.findings) {
    verdict.addFinding(opts.warnOnly && f.action === 'Enforce' ? { ...f, action: 'Warn' } : f);
  }
  // A stand-in holds nothing: its pods reserve their addresses when they are created.
  if (!opts.template && !opts.standIn) verdict.addresses = result.addresses;
}

function ownerOf(meta: unknown, namespace: string, context: AdmissionContext): { owner?: SharingOwner } {
  const owner = sharingOwnerOf(meta, context.config.addressSharingOwners, namespace);
  return owner ? { owner } : {};
}

const optional = <K extends string>(k: K, v: string | undefined): Partial<Record<K, string>> =>
  (v ? { [k]: v } : {}) as Partial<Record<K, string>>;
