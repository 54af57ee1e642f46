// The findings of pods that share what decides them, judged once (issue 28). Replicas of one
// workload carry the same annotation text in one namespace; with no hardware address the verdict
// reads nothing of the pod but that text (its name, uid and owner only matter to the uniqueness
// index), so every replica's audit after the first is a lookup instead of a review.
//
// A hit is exact, not eventually right: an entry keeps what its judgement read (the PolicySet
// snapshot, the namespace's labels, each NAD entry looked up) and is used only while each is still
// the same. Pods whose judgement consults the uniqueness index (an address) or the DRA view
// (templates are not tracked by identity) are judged every time and never kept.
//
// Bounded: at most `cap` entries (least recently used out first), keys only for texts up to
// MEMO_TEXT_CHARS, entries older than `maxAgeMs` unused. Fed only by the audit's own judgements
// of pods the pod watch holds: no request adds to it.
import type { DraView } from '../dra/index.js';
import type { Nad, NadLookup } from '../nads/index.js';
import type { PolicyEvaluator, PolicySet } from '../policy/index.js';
import { auditPod, type AuditContext } from './judge.js';
import type { AuditFinding, LivePod } from './types.js';

/** Entries kept: a few per namespace's workloads is what repeats (templates), not one per pod. */
export const MEMO_ENTRIES = 1024;
/** Longest annotation texts (both together) kept in a key: larger ones are judged every time (at most ~4 MiB of keys). */
export const MEMO_TEXT_CHARS = 2048;
/** Findings kept per entry: a pod with more is judged every time (each message is up to 1 KiB). */
export const MEMO_FINDINGS = 16;
/** An entry unused after this long is judged again (the inputs are checked anyway; this keeps old verdicts from lingering). */
export const MEMO_MAX_AGE_MS = 60_000;

interface Entry {
  findings: AuditFinding[];
  policies: PolicySet;
  labels: string;
  /** Each NAD looked up, with the cache entry it found (undefined: not found). */
  nads: Array<{ namespace: string; name: string; nad: Nad | undefined }>;
  at: number;
}

export interface AuditMemoOptions {
  cap?: number;
  maxAgeMs?: number;
  now?: () => number;
}

export interface AuditMemoStats {
  entries: number;
  hits: number;
  misses: number;
}

/**
 * The keys that carry a hardware address, as pods write them: such a pod is judged at once, without
 * the memo's bookkeeping (a cluster of pods with MACs gains nothing from it). Only a shortcut: a
 * key written otherwise (escaped) goes through the memo, whose judgement sees the address.
 */
const MAY_HOLD_ADDRESS = /"(?:mac|infiniband-guid|cni-args)"/;

const nadOf = (l: NadLookup): Nad | undefined => (l.status === 'found' ? l.nad : undefined);

/**
 * The key: namespace and both annotation texts (absent and empty told apart); undefined when too
 * long to keep. The texts may hold newlines, so the first goes with its length: without it
 * ('a\n+b', absent) and ('a', 'b\n-') were one key. A namespace name has no newline.
 */
function keyOf(pod: LivePod): string | undefined {
  const n = pod.networks;
  const d = pod.defaultNetwork;
  if ((n?.length ?? 0) + (d?.length ?? 0) > MEMO_TEXT_CHARS) return undefined;
  return `${pod.namespace}\n${n === undefined ? '-' : `${n.length}+${n}`}\n${d === undefined ? '-' : `+${d}`}`;
}

export class AuditMemo {
  private readonly entries = new Map<string, Entry>();
  private readonly cap: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private hits = 0;
  private misses = 0;

  constructor(o: AuditMemoOptions = {}) {
    this.cap = o.cap ?? MEMO_ENTRIES;
    this.maxAgeMs = o.maxAgeMs ?? MEMO_MAX_AGE_MS;
    this.now = o.now ?? Date.now;
  }

  /** `auditPod(pod, ctx)`, from an entry when one judged the same inputs. */
  judge(pod: LivePod, ctx: AuditContext): AuditFinding[] {
    const key = keyOf(pod);
    if (key === undefined || (pod.networks !== undefined && MAY_HOLD_ADDRESS.test(pod.networks))) {
      this.misses++;
      return auditPod(pod, ctx);
    }
    const labelsObject = ctx.namespaceLabels(pod.namespace);
    // Serialized only to compare or keep: a pod with an address (judged every time) needs neither.
    let labels: string | undefined;
    const labelsText = (): string => (labels ??= JSON.stringify(labelsObject));
    const policies = ctx.policies;
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      if (this.valid(hit, ctx, policies, labelsText(), now)) {
        hit.at = now;
        this.entries.set(key, hit); // most recently used: last out
        this.hits++;
        return hit.findings;
      }
    }
    this.misses++;
    // The judgement, with what it reads recorded.
    const nads: Entry['nads'] = [];
    let addresses = false;
    let dra = false;
    const policy: PolicyEvaluator = {
      evaluate: (input, options) => {
        const r = ctx.policy.evaluate(input, options);
        // The audit's dry-run CREATE has an identity, so every address is held: none, no index read.
        if (r.addresses.length > 0) addresses = true;
        return r;
      },
    };
    const recording: AuditContext = {
      nads: (namespace, name) => {
        const found = ctx.nads(namespace, name);
        nads.push({ namespace, name, nad: nadOf(found) });
        return found;
      },
      namespaceLabels: () => labelsObject,
      policy,
      policies,
      config: ctx.config,
      ...(ctx.dra ? { dra: touched(ctx.dra, () => (dra = true)) } : {}),
    };
    const findings = auditPod(pod, recording);
    if (!addresses && !dra && findings.length <= MEMO_FINDINGS) {
      this.entries.set(key, { findings, policies, labels: labelsText(), nads, at: now });
      for (const old of this.entries.keys()) {
        if (this.entries.size <= this.cap) break;
        this.entries.delete(old);
      }
    }
    return findings;
  }

  private valid(e: Entry, ctx: AuditContext, policies: PolicySet, labels: string, now: number): boolean {
    if (e.policies !== policies || e.labels !== labels || now - e.at > this.maxAgeMs) return false;
    for (const n of e.nads) if (nadOf(ctx.nads(n.namespace, n.name)) !== n.nad) return false;
    return true;
  }

  /** Drops every entry (the owner's stop, tests). */
  clear(): void {
    this.entries.clear();
  }

  stats(): AuditMemoStats {
    return { entries: this.entries.size, hits: this.hits, misses: this.misses };
  }
}

/** The DRA view, calling `onUse` on any read: a judgement that read it is not kept. Optional reads stay absent when absent. */
function touched(dra: DraView, onUse: () => void): DraView {
  const out: DraView = {
    classesFor: (resource) => (onUse(), dra.classesFor(resource)),
    template: (namespace, name) => (onUse(), dra.template(namespace, name)),
  };
  if (dra.templateNamespaces) out.templateNamespaces = (name) => (onUse(), dra.templateNamespaces!(name));
  if (dra.deviceClass) out.deviceClass = (name) => (onUse(), dra.deviceClass!(name));
  if (dra.templateDevices) out.templateDevices = (namespace, name) => (onUse(), dra.templateDevices!(namespace, name));
  return out;
}
