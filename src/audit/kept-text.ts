// What the background audit keeps of live pods' network annotations (issue 37, finding 3): each
// pod's texts within a per-pod bound, all pods' within a total budget. A real annotation is a few
// hundred characters (a KubeVirt VM with many NICs a few thousand); the apiserver allows 256 KiB,
// and 700 pods of 250 KB (one selection padded with JSON whitespace) ran the heap out.
//
// Over the per-pod bound, the JSON form is kept without its insignificant whitespace when that
// fits: the reader sees the same tokens, so the same verdict. Past either bound the texts are
// not kept: the pod holds a fingerprint (a changed annotation is judged again) and its hardware
// addresses (the pods sharing one are judged again when it changes or goes), and is reported as
// not judged (result `error`), never as clean. It is not re-read from the API server: a tenant
// could then make the audit fetch 256 KiB per pod on every policy change.
import { createHash } from 'node:crypto';
import { detectFormat } from '../annotation/index.js';
import type { PodAddress } from '../policy/index.js';
import { sharedAnnotation, sharedText, withAnnotations } from './live-pod.js';
import type { AuditFinding, LivePod, UnkeptAnnotations } from './types.js';

/** Characters of one pod's two annotations kept (after whitespace is removed): 20 times a KubeVirt VM's. */
export const POD_TEXT_CHARS = 16 * 1024;
/**
 * Characters of all pods' own (unshared) annotation texts: 150,000 pods (the sizing model's
 * maximum) each with a ~220-character text of its own (a MAC or IPs); the model's mix (30 % with
 * a MAC or GUID, the rest sharing their replicas' texts) holds ~7 MB. A sixth of the heap cap.
 */
export const TEXT_BUDGET_CHARS = 32 * 1024 * 1024;
/** Addresses an unkept pod holds for its sharers: the per-pod bound of the uniqueness index. */
export const UNKEPT_ADDRESSES = 64;
/** What one address counts against the budget beyond its characters (the object and its array slot). */
const ADDRESS_OVERHEAD = 48;
/** The annotation reader's nesting bound (src/annotation/json-reader.ts): deeper texts are left as they are, so its error names the same offset. */
const MAX_DEPTH = 64;

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;
/** `[ ] { } , :`: whitespace next to one of these is never part of a token. */
const isStructural = (c: number): boolean => c === 91 || c === 93 || c === 123 || c === 125 || c === 44 || c === 58;

/**
 * A JSON-form annotation without whitespace next to a structural character (outside strings), or
 * the text itself: when nothing goes, when it is not JSON (the simple form trims items itself),
 * nested deeper than the reader reads, or not valid JSON. The tokens are the same, so the reader
 * sees the same value, duplicate keys and number forms; only a message quoting the whole text
 * (a bare object) quotes it without the whitespace.
 */
export function withoutSpace(text: string): string {
  if (detectFormat(text) !== 'json') return text;
  const parts: string[] = [];
  let from = 0;
  let inString = false;
  let depth = 0;
  let last = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      last = c;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > MAX_DEPTH) return text;
    } else if (c === 93 || c === 125) depth--;
    if (!isSpace(c)) {
      last = c;
      continue;
    }
    let j = i;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    const next = j < text.length ? text.charCodeAt(j) : -1;
    if (last === -1 || next === -1 || isStructural(last) || isStructural(next)) {
      parts.push(text.slice(from, i));
      from = j;
    }
    i = j - 1;
  }
  if (from === 0) return text;
  parts.push(text.slice(from));
  const out = parts.join('');
  try {
    JSON.parse(out);
  } catch {
    return text;
  }
  return out;
}

/**
 * A copy of `text` that holds no reference to the string it was cut from: V8 keeps a slice (or a
 * join of one part) as a view of its parent, which would keep the 250 KB original alive.
 */
const detached = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

/** SHA-256 of both texts, absent and empty told apart (128 bits: no two annotations met in practice share one). */
export function fingerprintOf(networks: string | undefined, defaultNetwork: string | undefined): string {
  const h = createHash('sha256');
  h.update(networks === undefined ? '-' : `${networks.length}+`);
  if (networks !== undefined) h.update(networks);
  h.update(defaultNetwork === undefined ? '-' : '+');
  if (defaultNetwork !== undefined) h.update(defaultNetwork);
  return h.digest('base64url').slice(0, 22);
}

const ownChars = (text: string | undefined): number => (text === undefined || sharedText(text) ? 0 : text.length);
const addressChars = (addresses: readonly PodAddress[] | undefined): number => {
  let n = 0;
  for (const a of addresses ?? []) n += a.value.length + a.network.length + ADDRESS_OVERHEAD;
  return n;
};

/** What a kept pod counts against the budget: its own texts (shared ones are bounded by the interner), or an unkept one's addresses. */
export const chargeOf = (pod: LivePod): number =>
  pod.unkept ? addressChars(pod.unkept.addresses) : ownChars(pod.networks) + ownChars(pod.defaultNetwork);

/** The finding of a pod whose annotations are not kept: reported as not judged (`error`), never as clean. */
export function notJudgedFinding(u: UnkeptAnnotations): AuditFinding {
  const message =
    u.bound === 'pod'
      ? `metadata.annotations: Too long: ${u.chars} characters of network annotations: not judged by the background audit, which keeps at most ${u.limit} characters of a pod's (JSON whitespace removed); admission judges the pod as always, and the audit again once they are shorter`
      : `metadata.annotations: not judged by the background audit: its budget of ${u.limit} characters for the network annotations of all live pods is full (netattach_audit_pods{state="not-kept"}); judged again at the pod's next change or the watch's next relist once there is room`;
  return { policy: 'builtin', rule: 'notJudged', action: 'Audit', result: 'error', severity: 'info', message };
}

export interface AnnotationBudgetOptions {
  podChars?: number;
  totalChars?: number;
}

/** The per-pod bound and the total budget over the pods the audit holds; the owner reports each pod it adds and drops. */
export class AnnotationBudget {
  readonly podChars: number;
  readonly totalChars: number;
  private used = 0;
  private unkept = 0;

  constructor(o: AnnotationBudgetOptions = {}) {
    this.podChars = o.podChars ?? POD_TEXT_CHARS;
    this.totalChars = o.totalChars ?? TEXT_BUDGET_CHARS;
  }

  /**
   * The pod as it can be kept in place of `old` (whose charge would be given back): `read` with its
   * texts, compacted if over the per-pod bound, or with an `unkept` record. `addresses` are read
   * only for a pod not kept.
   */
  keep(read: LivePod, old: LivePod | undefined, addresses: () => readonly PodAddress[]): LivePod {
    const room = this.totalChars - this.used + (old ? chargeOf(old) : 0);
    let { networks, defaultNetwork } = read;
    const chars = (networks?.length ?? 0) + (defaultNetwork?.length ?? 0);
    if (chars > this.podChars) {
      const n = networks === undefined ? undefined : withoutSpace(networks);
      const d = defaultNetwork === undefined ? undefined : withoutSpace(defaultNetwork);
      if ((n?.length ?? 0) + (d?.length ?? 0) > this.podChars) return this.unkeptPod(read, 'pod', this.podChars, chars, room, addresses);
      networks = n === undefined || n === networks ? n : sharedAnnotation(detached(n));
      defaultNetwork = d === undefined || d === defaultNetwork ? d : sharedAnnotation(detached(d));
    }
    if (ownChars(networks) + ownChars(defaultNetwork) > room) return this.unkeptPod(read, 'total', this.totalChars, chars, room, addresses);
    return networks === read.networks && defaultNetwork === read.defaultNetwork ? read : withAnnotations(read, networks, defaultNetwork);
  }

  private unkeptPod(
    read: LivePod,
    bound: UnkeptAnnotations['bound'],
    limit: number,
    chars: number,
    room: number,
    addresses: () => readonly PodAddress[],
  ): LivePod {
    const unkept: UnkeptAnnotations = { bound, limit, chars, fingerprint: fingerprintOf(read.networks, read.defaultNetwork) };
    const held = addresses();
    if (held.length > 0 && held.length <= UNKEPT_ADDRESSES && addressChars(held) <= room)
      unkept.addresses = held.map((a) => ({ kind: a.kind, value: a.value, network: a.network }));
    return withAnnotations(read, undefined, undefined, unkept);
  }

  /** `pod` now held in place of `old` (either may be absent: added, or dropped). */
  replaced(old: LivePod | undefined, pod: LivePod | undefined): void {
    if (old) {
      this.used -= chargeOf(old);
      if (old.unkept) this.unkept--;
    }
    if (pod) {
      this.used += chargeOf(pod);
      if (pod.unkept) this.unkept++;
    }
  }

  /** Characters counted now (tests). */
  usedChars(): number {
    return this.used;
  }

  /** Pods held without their annotation texts. */
  notKept(): number {
    return this.unkept;
  }
}
