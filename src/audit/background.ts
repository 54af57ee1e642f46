// The background audit of `serve` (cluster mode): every live pod with networks is judged by the
// admission core (judge.ts) against the policies, NADs and namespace labels in force now, and
// judged again when any of them changes, and every `resyncMs` anyway.
//
// Bounded work: pods to judge wait in a queue (a Set: FIFO, each pod once); every `tickMs` at most
// `podsPerSecond * tickMs / 1000` of them are judged, and a tick stops early after `sliceMs` of
// wall time. Between ticks the event loop is free, so admission requests are never queued behind
// a 100,000-pod audit. Small ticks (20 ms, 2 ms slices): 100 ms ticks with 10 ms slices raised
// /mutate p99 at 1,000/s from 1.4 to 2.6 ms (bench section audit); 20 ms ones left it in the noise.
//
// Changes are found by comparing, once per tick, cheap fingerprints of what the judgement reads:
// the PolicySet snapshot (swapped whole on reload), the NAD cache entries (replaced on change) and
// each audited namespace's labels. Pods arrive through the pod watch (the PodAddressSource's
// observer): a pod that gains, loses or changes an address also queues the pods that hold the
// same address, whose uniqueness verdict it changes.
//
// NADs are judged themselves too (judge-nad.ts): their objects arrive through the NAD watch the
// NAD cache already runs (`nadWatch`, its observer), wait in their own queue until judged (the
// object is dropped then: the cache keeps parsed entries only) and share the ticks' budget with
// the pods, NADs first (there are few). A NAD's verdict depends on its object and serve's flags
// only, so it is judged when listed and on each add or update, not on the periodic pass; a
// relist that brings the same resourceVersion judges nothing again.
import type { AdmissionConfig } from '../admission/index.js';
import type { DraView } from '../dra/index.js';
import { nadKey, type Nad, type NadSource } from '../nads/index.js';
import {
  podNetworkFacts,
  type AddressIndex,
  type PodAddress,
  type PodNetworkFacts,
  type PolicyEngine,
  type PolicySet,
} from '../policy/index.js';
import type { KubeObject, ListWatchHandler } from '../kube/index.js';
import { hasNetworks, type AuditContext } from './judge.js';
import { auditNad, auditedNadOf } from './judge-nad.js';
import { capFindings } from './bounds.js';
import { AnnotationBudget, notJudgedFinding, type AnnotationBudgetOptions } from './kept-text.js';
import { livePodOf, sameLivePod } from './live-pod.js';
import { audited } from './snapshot.js';
import { AuditMemo, type AuditMemoStats } from './memo.js';
import type { AuditFinding, AuditedNad, LivePod, NadAudit, PodAudit } from './types.js';
import type { AuditMetrics } from './metrics.js';

export interface AuditLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface BackgroundAuditOptions {
  nads: Pick<NadSource, 'get' | 'list' | 'synced'>;
  namespaceLabels: (namespace: string) => Record<string, string>;
  /** The server's engine: the policies in force and the live uniqueness index. */
  engine: PolicyEngine;
  index?: AddressIndex;
  config: AdmissionConfig;
  /** DeviceClasses and ResourceClaimTemplates as the webhook reads them (cache only; a template change is seen on the periodic pass). */
  dra?: DraView;
  /** Pods (`ns/name`) using a NAD (the pod watch's NAD usage). */
  podsUsingNad: (namespace: string, name: string) => string[];
  /** True once the pod watch (and what the judgement reads) has synced. */
  ready: () => boolean;
  podsPerSecond?: number;
  tickMs?: number;
  sliceMs?: number;
  resyncMs?: number;
  /** The bounds on the annotation texts kept (tests; the defaults are the documented ones). */
  texts?: AnnotationBudgetOptions;
  metrics?: AuditMetrics;
  logger?: AuditLogger;
  now?: () => number;
}

const CHANGE_CHECK_MS = 1000;
const podKeyOf = (p: { namespace: string; name: string }): string => `${p.namespace}/${p.name}`;
const nameOrder = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
interface KnownNad extends AuditedNad {
  resourceVersion?: string;
}
const sameFindings = (a: readonly AuditFinding[] | undefined, b: readonly AuditFinding[]): boolean =>
  (a?.length ?? 0) === b.length && (b.length === 0 || JSON.stringify(a) === JSON.stringify(b));

export class BackgroundAudit implements ListWatchHandler {
  /** Live pods with networks, by namespace then name. */
  private readonly pods = new Map<string, Map<string, LivePod>>();
  /** Non-empty findings by pod key. */
  private readonly findings = new Map<string, AuditFinding[]>();
  /** Pods to judge: the LivePod objects themselves (no key string per pod); a replaced one leaves with its replacement queued. */
  private readonly queue = new Set<LivePod>();
  /** NADs by namespace then name (their identity; the objects are not kept). */
  private readonly nadsKnown = new Map<string, Map<string, KnownNad>>();
  /** NAD objects waiting to be judged, by `ns/name` (FIFO; a newer version replaces a waiting one). */
  private readonly nadQueue = new Map<string, Record<string, unknown>>();
  /** Non-empty findings by NAD key, whether or not the namespace is audited now (see nadVisible). */
  private readonly nadFindings = new Map<string, AuditFinding[]>();
  /** Whether the NAD webhook sees a namespace's NADs, as last noticed (metrics count only those). */
  private readonly nadVisible = new Map<string, boolean>();
  private nadsRelisted: Set<string> | undefined;
  private readonly changed = new Set<string>();
  /** During a relist: the pods (as kept) seen again. */
  private seen: Set<LivePod> | undefined;
  private nadsSeen = new Map<string, Nad>();
  private readonly labelsSeen = new Map<string, string>();
  private policiesSeen: PolicySet | undefined;
  private lastFull = 0;
  private lastCheck = -Infinity;
  private firstPassDone = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly perTick: number;
  private readonly tickMs: number;
  private readonly sliceMs: number;
  private readonly resyncMs: number;
  private readonly now: () => number;
  private readonly ctx: AuditContext;
  /** Verdicts of address-free pods by what decides them: replicas of one template are judged once. */
  private readonly memo: AuditMemo;
  /** What the pods' annotation texts may hold, per pod and in all (kept-text.ts). */
  private readonly texts: AnnotationBudget;

  constructor(private readonly o: BackgroundAuditOptions) {
    this.tickMs = o.tickMs ?? 20;
    this.perTick = Math.max(1, Math.round(((o.podsPerSecond ?? 1000) * this.tickMs) / 1000));
    this.sliceMs = o.sliceMs ?? 2;
    this.resyncMs = o.resyncMs ?? 10 * 60_000;
    this.now = o.now ?? Date.now;
    this.ctx = {
      nads: (ns, name) => {
        const nad = o.nads.get(ns, name);
        return nad ? { status: 'found', nad } : { status: 'not-found' };
      },
      namespaceLabels: o.namespaceLabels,
      policy: o.engine,
      get policies() {
        return o.engine.policies();
      },
      config: o.config,
      ...(o.dra ? { dra: o.dra } : {}),
    };
    this.memo = new AuditMemo({ now: this.now });
    this.texts = new AnnotationBudget(o.texts);
    o.metrics?.watch(this);
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.tickMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.memo.clear();
  }

  /** The verdict memo's size and use (tests, benchmarks). */
  memoStats(): AuditMemoStats {
    return this.memo.stats();
  }

  // --- the pod watch (called after the address index has been updated) ---

  resync(): void {
    // The first list (no pods held yet) has nothing to forget: no set of every pod for it, the start's peak.
    this.seen = this.pods.size > 0 ? new Set() : undefined;
  }

  resynced(): void {
    const seen = this.seen;
    this.seen = undefined;
    if (!seen) return;
    for (const [ns, byName] of this.pods) for (const [name, pod] of [...byName]) if (!seen.has(pod)) this.forget(ns, name);
  }

  upsert(obj: KubeObject): void {
    const read = livePodOf(obj);
    if (!read) return;
    if (!hasNetworks(read)) return this.forget(read.namespace, read.name);
    const byName = this.pods.get(read.namespace) ?? new Map<string, LivePod>();
    const old = byName.get(read.name);
    // Read once, only for a pod whose texts are not kept: what it holds, and whom its arrival concerns.
    let addresses: readonly PodAddress[] | undefined;
    const addressesOf = (): readonly PodAddress[] => (addresses ??= this.factsOf(read).addresses);
    const pod = this.texts.keep(read, old, addressesOf);
    if (old && sameLivePod(old, pod)) {
      this.seen?.add(old);
      return;
    }
    this.seen?.add(pod);
    this.texts.replaced(old, pod);
    byName.set(pod.name, pod);
    this.pods.set(pod.namespace, byName);
    if (old) this.queue.delete(old);
    this.queue.add(pod);
    if (old) this.queueSharers(old);
    this.queueSharers(pod, pod.unkept ? addressesOf() : undefined);
  }

  remove(obj: KubeObject): void {
    const pod = livePodOf(obj);
    if (pod) this.forget(pod.namespace, pod.name);
  }

  private forget(namespace: string, name: string): void {
    const byName = this.pods.get(namespace);
    const old = byName?.get(name);
    if (!old) return;
    byName!.delete(name);
    this.texts.replaced(old, undefined);
    if (byName!.size === 0) this.pods.delete(namespace);
    this.queue.delete(old);
    this.setFindings(podKeyOf(old), namespace, []);
    this.queueSharers(old);
    // A namespace whose last pod left still has a report to clear.
    this.changed.add(namespace);
  }

  private factsOf(pod: LivePod): PodNetworkFacts {
    return podNetworkFacts(pod.namespace, pod.networks, pod.defaultNetwork, this.o.config.defaultNetworkNamespace);
  }

  /**
   * Live pods holding one of `pod`'s hardware addresses (`addresses`, else those its texts or its
   * unkept record hold): their uniqueness verdict may change.
   */
  private queueSharers(pod: LivePod, addresses?: readonly PodAddress[]): void {
    const index = this.o.index;
    if (!index) return;
    for (const a of addresses ?? (pod.unkept ? (pod.unkept.addresses ?? []) : this.factsOf(pod).addresses)) {
      for (const h of index.conflicts(a.kind, a.value, a.network, 'Cluster', pod)) if (h.expires === undefined) this.queueKey(h.pod);
    }
  }

  private queueKey(key: string): void {
    const slash = key.indexOf('/');
    const pod = this.pods.get(key.slice(0, slash))?.get(key.slice(slash + 1));
    if (pod) this.queue.add(pod);
  }

  // --- the work ---

  /** One tick: notice changes, then judge a bounded number of queued pods. */
  tick(): void {
    if (!this.o.ready() || !this.o.nads.synced()) return;
    this.noticeChanges();
    const started = performance.now();
    let done = 0;
    const spent = (): boolean => done >= this.perTick || (done > 0 && performance.now() - started > this.sliceMs);
    for (const [key, obj] of this.nadQueue) {
      if (spent()) break;
      this.nadQueue.delete(key);
      this.judgeNad(key, obj);
      done++;
    }
    for (const pod of this.queue) {
      if (spent()) break;
      this.queue.delete(pod);
      this.judge(pod);
      done++;
    }
    if (done > 0) this.o.metrics?.judged(done, (performance.now() - started) / 1000);
    const empty = this.queue.size === 0 && this.nadQueue.size === 0;
    if (empty && !this.firstPassDone) {
      this.firstPassDone = true;
      this.o.logger?.info(
        { pods: this.podCount(), nads: this.nadCount(), withFindings: this.findings.size + this.nadFindings.size },
        'audit: first pass over the live pods and NADs done',
      );
    }
    if (empty) this.o.metrics?.passDone(this.now() / 1000);
  }

  /** Judges everything queued now, ignoring the rate (tests, benchmarks). */
  drain(): void {
    if (!this.o.ready() || !this.o.nads.synced()) return;
    this.noticeChanges(true);
    for (const [key, obj] of this.nadQueue) {
      this.nadQueue.delete(key);
      this.judgeNad(key, obj);
    }
    for (const pod of this.queue) {
      this.queue.delete(pod);
      this.judge(pod);
    }
    this.firstPassDone = true;
  }

  private judge(pod: LivePod): void {
    const { namespace } = pod;
    if (this.pods.get(namespace)?.get(pod.name) !== pod) return; // gone or replaced (the replacement is queued)
    const findings = !audited(namespace, this.o.namespaceLabels(namespace))
      ? []
      : pod.unkept
        ? [notJudgedFinding(pod.unkept)]
        : capFindings(this.memo.judge(pod, this.ctx));
    this.setFindings(podKeyOf(pod), namespace, findings);
  }

  private setFindings(key: string, namespace: string, findings: AuditFinding[]): void {
    const old = this.findings.get(key);
    if (sameFindings(old, findings)) return;
    this.o.metrics?.replaced(old ?? [], findings);
    if (findings.length === 0) this.findings.delete(key);
    else this.findings.set(key, findings);
    this.changed.add(namespace);
  }

  private queueAll(): void {
    for (const byName of this.pods.values()) for (const pod of byName.values()) this.queue.add(pod);
  }

  private noticeChanges(force = false): void {
    const t = this.now();
    // Once a second at most: listing 10,000 NAD entries every tick would be work for nothing.
    if (!force && t - this.lastCheck < CHANGE_CHECK_MS) return;
    this.lastCheck = t;
    const policies = this.o.engine.policies();
    if (policies !== this.policiesSeen || t - this.lastFull >= this.resyncMs) {
      if (this.policiesSeen !== undefined && policies !== this.policiesSeen)
        this.o.logger?.info({}, 'audit: policies changed; judging every live pod again');
      this.policiesSeen = policies;
      this.lastFull = t;
      this.queueAll();
    }
    // NADs: an entry added, replaced or removed queues the pods that use it.
    const nads = new Map<string, Nad>();
    for (const nad of this.o.nads.list()) nads.set(nadKey(nad.namespace, nad.name), nad);
    const touched: string[] = [];
    for (const [k, nad] of nads) if (this.nadsSeen.get(k) !== nad) touched.push(k);
    for (const k of this.nadsSeen.keys()) if (!nads.has(k)) touched.push(k);
    this.nadsSeen = nads;
    for (const k of touched) {
      const slash = k.indexOf('/');
      for (const pod of this.o.podsUsingNad(k.slice(0, slash), k.slice(slash + 1))) this.queueKey(pod);
    }
    // Namespace labels select policies and exemptions.
    for (const [ns, byName] of this.pods) {
      const labels = JSON.stringify(this.o.namespaceLabels(ns));
      if (this.labelsSeen.get(ns) === labels) continue;
      const known = this.labelsSeen.has(ns);
      this.labelsSeen.set(ns, labels);
      if (known) for (const pod of byName.values()) this.queue.add(pod);
    }
    for (const ns of this.labelsSeen.keys()) if (!this.pods.has(ns)) this.labelsSeen.delete(ns);
    // NADs: the same labels decide whether the NAD webhook sees them; their findings stay known.
    for (const ns of this.nadsKnown.keys()) this.setNadVisible(ns, audited(ns, this.o.namespaceLabels(ns)));
    for (const ns of this.nadVisible.keys()) if (!this.nadsKnown.has(ns)) this.nadVisible.delete(ns);
  }

  // --- NADs (the NAD watch's observer) ---

  /** What the NAD cache's list/watch hands over, raw, next to its own parsed entries. */
  readonly nadWatch: ListWatchHandler = {
    resync: () => void (this.nadsRelisted = new Set()),
    upsert: (obj) => this.upsertNad(obj),
    remove: (obj) => {
      const nad = auditedNadOf(obj);
      if (nad) this.forgetNad(nad.namespace, nad.name);
    },
    resynced: () => {
      const seen = this.nadsRelisted;
      this.nadsRelisted = undefined;
      if (!seen) return;
      for (const [ns, names] of this.nadsKnown)
        for (const name of [...names.keys()]) if (!seen.has(`${ns}/${name}`)) this.forgetNad(ns, name);
    },
  };

  private upsertNad(obj: KubeObject): void {
    const nad = auditedNadOf(obj);
    if (!nad) return;
    const key = nadKey(nad.namespace, nad.name);
    this.nadsRelisted?.add(key);
    const rv = obj.metadata?.resourceVersion;
    const names = this.nadsKnown.get(nad.namespace) ?? new Map<string, KnownNad>();
    const old = names.get(nad.name);
    // The same version, judged or waiting: a relist or a replay judges nothing again.
    if (old && rv !== undefined && old.resourceVersion === rv && old.uid === nad.uid) return;
    names.set(nad.name, rv !== undefined ? { ...nad, resourceVersion: rv } : nad);
    this.nadsKnown.set(nad.namespace, names);
    this.nadQueue.set(key, obj as Record<string, unknown>);
    // A new NAD counts as a pass in its namespace's report.
    if (!old) this.changed.add(nad.namespace);
  }

  private forgetNad(namespace: string, name: string): void {
    const names = this.nadsKnown.get(namespace);
    if (!names?.delete(name)) return;
    if (names.size === 0) this.nadsKnown.delete(namespace);
    const key = nadKey(namespace, name);
    this.nadQueue.delete(key);
    this.setNadFindings(key, namespace, []);
    this.changed.add(namespace);
  }

  private judgeNad(key: string, obj: Record<string, unknown>): void {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const nad = this.nadsKnown.get(namespace)?.get(key.slice(slash + 1));
    if (!nad) return;
    this.setNadFindings(key, namespace, auditNad(obj, nad, this.o.config));
  }

  private visible(namespace: string): boolean {
    let v = this.nadVisible.get(namespace);
    if (v === undefined) this.nadVisible.set(namespace, (v = audited(namespace, this.o.namespaceLabels(namespace))));
    return v;
  }

  private setNadFindings(key: string, namespace: string, findings: AuditFinding[]): void {
    const old = this.nadFindings.get(key);
    if (sameFindings(old, findings)) return;
    if (this.visible(namespace)) this.o.metrics?.replaced(old ?? [], findings);
    if (findings.length === 0) this.nadFindings.delete(key);
    else this.nadFindings.set(key, findings);
    this.changed.add(namespace);
  }

  /** A namespace the NAD webhook starts or stops seeing: its NADs' findings enter or leave the metrics and the report. */
  private setNadVisible(namespace: string, visible: boolean): void {
    const before = this.visible(namespace);
    if (before === visible) return;
    this.nadVisible.set(namespace, visible);
    for (const name of this.nadsKnown.get(namespace)?.keys() ?? []) {
      const findings = this.nadFindings.get(nadKey(namespace, name)) ?? [];
      if (visible) this.o.metrics?.replaced([], findings);
      else this.o.metrics?.replaced(findings, []);
    }
    this.changed.add(namespace);
  }

  // --- what the publisher and metrics read ---

  /** True once every pod known at the first sync has been judged (reports before that would clear findings not yet found). */
  complete(): boolean {
    return this.firstPassDone;
  }

  /** Pods and NADs waiting to be judged. */
  pending(): number {
    return this.queue.size + this.nadQueue.size;
  }

  /** Live pods held without their annotation texts (over a bound; reported as not judged). */
  notKept(): number {
    return this.texts.notKept();
  }

  /** Characters of annotation texts counted against the total budget now (tests). */
  textChars(): number {
    return this.texts.usedChars();
  }

  nadCount(): number {
    let n = 0;
    for (const names of this.nadsKnown.values()) n += names.size;
    return n;
  }

  podCount(): number {
    let n = 0;
    for (const byName of this.pods.values()) n += byName.size;
    return n;
  }

  /** Namespaces whose findings changed since last taken (the caller re-adds those it could not write). */
  takeChanged(): string[] {
    const out = [...this.changed];
    this.changed.clear();
    return out;
  }

  markChanged(namespaces: Iterable<string>): void {
    for (const ns of namespaces) this.changed.add(ns);
  }

  /** Namespaces with live pods with networks or NADs. */
  namespaces(): string[] {
    const out = new Set(this.pods.keys());
    for (const ns of this.nadsKnown.keys()) out.add(ns);
    return [...out];
  }

  /** The audited pods of a namespace (clean ones with no findings), sorted by name. */
  namespaceAudits(namespace: string): PodAudit[] {
    const byName = this.pods.get(namespace);
    if (!byName || !audited(namespace, this.o.namespaceLabels(namespace))) return [];
    return [...byName.values()].sort(nameOrder).map((pod) => ({ pod, findings: this.findings.get(podKeyOf(pod)) ?? [] }));
  }

  /** The NADs of a namespace the NAD webhook sees (clean ones with no findings), sorted by name. */
  namespaceNadAudits(namespace: string): NadAudit[] {
    const names = this.nadsKnown.get(namespace);
    if (!names || !audited(namespace, this.o.namespaceLabels(namespace))) return [];
    return [...names.values()]
      .sort(nameOrder)
      .map(({ resourceVersion: _rv, ...nad }) => ({ nad, findings: this.nadFindings.get(nadKey(nad.namespace, nad.name)) ?? [] }));
  }

  /** All pod findings now (tests, `netattach audit` equality). */
  allFindings(): PodAudit[] {
    const out: PodAudit[] = [];
    for (const ns of [...this.pods.keys()].sort()) for (const a of this.namespaceAudits(ns)) if (a.findings.length > 0) out.push(a);
    return out;
  }

  /** All NAD findings now (tests, `netattach audit` equality). */
  allNadFindings(): NadAudit[] {
    const out: NadAudit[] = [];
    for (const ns of [...this.nadsKnown.keys()].sort()) for (const a of this.namespaceNadAudits(ns)) if (a.findings.length > 0) out.push(a);
    return out;
  }
}
