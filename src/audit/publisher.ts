// Writes the audit's findings as PolicyReports, when the CRD exists, from one replica at a time
// (the Lease), never in a storm: only namespaces whose findings changed are looked at, a report
// is written only when its digest differs from what was last written (or found on taking the
// lease), and at most `maxWritesPerRound` writes go out per round; the rest wait for the next.
// A write the apiserver refuses holds up its own namespace only: that namespace is retried with a
// growing delay (one round, doubling up to REPORT_RETRY_MAX_MS) while the others are written.
import { KubeRequestError, describeKubeError, listPage, type KubeTransport } from '../kube/index.js';
import type { BackgroundAudit, AuditLogger } from './background.js';
import { APPLY_PATCH, FIELD_MANAGER, Lease } from './lease.js';
import type { AuditMetrics } from './metrics.js';
import { firstSeenOf, MANAGED_BY, policyReport, reportDigest, REPORT_API_VERSION, REPORT_NAME, type PolicyReportObject } from './report.js';

export interface PublisherOptions {
  /** Namespace of the Lease (netattach's own). */
  leaseNamespace: string;
  leaseName?: string;
  identity: string;
  leaseSeconds?: number;
  /** Time between rounds (lease renewal, CRD check, writes). */
  intervalMs?: number;
  maxWritesPerRound?: number;
  metrics?: AuditMetrics;
  logger?: AuditLogger;
  now?: () => number;
}

/** Reports read per page on taking the Lease (at most 512 KiB of results each: pages of ~10 MB). */
const TAKEOVER_PAGE = 20;

/** Longest wait before writing again the report of a namespace whose writes fail. */
export const REPORT_RETRY_MAX_MS = 5 * 60_000;

/** A namespace whose last write failed: when to try again, and why (logged when it changes). */
interface Failing {
  failures: number;
  retryAt: number;
  problem: string;
}

interface Written {
  digest: string;
  firstSeen: Map<string, number>;
}

const reportsPath = `/apis/${REPORT_API_VERSION}`;
const reportPath = (ns: string): string => `${reportsPath}/namespaces/${encodeURIComponent(ns)}/policyreports/${REPORT_NAME}`;

export class ReportPublisher {
  private readonly lease: Lease;
  private readonly written = new Map<string, Written>();
  /** Namespaces whose last write failed (removed on success or when the namespace is gone). */
  private readonly failing = new Map<string, Failing>();
  private leader = false;
  private crdPresent: boolean | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly now: () => number;
  private lastProblem: string | undefined;

  constructor(
    private readonly transport: KubeTransport,
    private readonly audit: BackgroundAudit,
    private readonly o: PublisherOptions,
  ) {
    this.now = o.now ?? Date.now;
    this.lease = new Lease(transport, {
      namespace: o.leaseNamespace,
      name: o.leaseName ?? 'netattach-audit',
      identity: o.identity,
      durationSeconds: o.leaseSeconds ?? 30,
      now: this.now,
    });
  }

  start(): void {
    this.timer ??= setInterval(() => void this.round(), this.o.intervalMs ?? 5_000).unref();
    void this.round();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    if (!this.leader) return;
    this.setLeader(false);
    await this.lease
      .release()
      .catch((err: unknown) =>
        this.o.logger?.warn(
          { err: describeKubeError(err) },
          'audit: could not release the Lease; another replica takes over when it expires',
        ),
      );
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** One round; never overlaps another, never throws (problems are logged once each). */
  round(): Promise<void> {
    this.running ??= this.roundOnce()
      .then(() => (this.lastProblem = undefined))
      .catch((err: unknown) => {
        const problem = describeKubeError(err);
        if (problem !== this.lastProblem) this.o.logger?.warn({ err: problem }, 'audit: writing PolicyReports failed; retrying');
        this.lastProblem = problem;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async roundOnce(): Promise<void> {
    const present = await this.crdInstalled();
    if (present !== this.crdPresent) {
      this.o.logger?.info(
        { crd: `policyreports.${REPORT_API_VERSION}`, present },
        present
          ? 'audit: PolicyReport CRD found; reports will be written'
          : 'audit: no PolicyReport CRD; findings only in metrics and logs',
      );
      this.crdPresent = present;
      this.o.metrics?.crd(present);
      // Installed later: what exists must be read again before writing.
      this.setLeader(false);
    }
    if (!present) return;
    const leader = await this.lease.acquire();
    if (leader && !this.leader) await this.takeOver();
    this.setLeader(leader);
    if (!leader || !this.audit.complete()) return;
    await this.write();
  }

  private setLeader(leader: boolean): void {
    if (leader !== this.leader)
      this.o.logger?.info(
        { identity: this.o.identity },
        leader ? 'audit: holding the Lease; writing PolicyReports' : 'audit: not holding the Lease',
      );
    this.leader = leader;
    this.o.metrics?.leader(leader);
  }

  private async crdInstalled(): Promise<boolean> {
    try {
      const list = (await this.transport.getJson(reportsPath, {})) as { resources?: Array<{ name?: string }> };
      return (list.resources ?? []).some((r) => r.name === 'policyreports');
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return false;
      throw err;
    }
  }

  /** On taking the lease: what is written now (by a previous holder) is the base for the diff. */
  private async takeOver(): Promise<void> {
    const selector = Object.entries(MANAGED_BY)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    this.written.clear();
    // In pages: each report can be 512 KiB, and only its digest and first-seen times are kept.
    let next: string | undefined;
    do {
      // Streamed: one report at a time is held, whatever a namespace user stored under the label.
      const page = await listPage(
        this.transport,
        `${reportsPath}/policyreports`,
        { labelSelector: selector, limit: String(TAKEOVER_PAGE), ...(next ? { continue: next } : {}) },
        'application/json',
        (raw) => {
          const item = raw as PolicyReportObject;
          const ns = item.metadata?.namespace;
          if (!ns || item.metadata.name !== REPORT_NAME) return;
          this.written.set(ns, {
            digest: reportDigest({ summary: item.summary, results: item.results ?? [], metadata: item.metadata }),
            firstSeen: firstSeenOf(item),
          });
        },
      );
      next = page.metadata?.continue || undefined;
    } while (next);
    this.audit.markChanged([...this.written.keys(), ...this.audit.namespaces()]);
  }

  private async write(): Promise<void> {
    const changed = this.audit.takeChanged();
    const max = this.o.maxWritesPerRound ?? 50;
    const now = this.now();
    const later: string[] = [];
    let writes = 0;
    for (const ns of changed) {
      // A failing namespace waits out its delay; a refused write counts as a write (no storm).
      if (writes >= max || (this.failing.get(ns)?.retryAt ?? 0) > now) {
        later.push(ns);
        continue;
      }
      const before = this.written.get(ns);
      const report = policyReport(
        ns,
        this.audit.namespaceAudits(ns),
        { now: Math.floor(now / 1000), firstSeen: (k) => before?.firstSeen.get(k) },
        this.audit.namespaceNadAudits(ns),
      );
      // A namespace without findings gets no report; one that had a report gets it emptied.
      // Either way nothing is left to write, so a namespace that was failing no longer is (its
      // entry would otherwise outlive it).
      if (report.results.length === 0 && !before) {
        this.setFailing(ns, undefined);
        continue;
      }
      const digest = reportDigest(report);
      if (before?.digest === digest) {
        this.o.metrics?.reportWrite('unchanged');
        this.setFailing(ns, undefined);
        continue;
      }
      writes++;
      try {
        await this.transport.patchJson(`${reportPath(ns)}?fieldManager=${FIELD_MANAGER}&force=true`, report, APPLY_PATCH);
      } catch (err) {
        this.o.metrics?.reportWrite('failed');
        // A namespace deleted since: its report went with it.
        if (err instanceof KubeRequestError && err.statusCode === 404 && !this.audit.namespaces().includes(ns)) {
          this.written.delete(ns);
          if (this.failing.delete(ns)) this.o.metrics?.failingNamespaces(this.failing.size);
          continue;
        }
        this.setFailing(ns, err);
        later.push(ns);
        continue;
      }
      this.o.metrics?.reportWrite('created-or-updated');
      this.written.set(ns, { digest, firstSeen: firstSeenOf(report) });
      this.setFailing(ns, undefined);
    }
    this.audit.markChanged(later);
  }

  /** Records a namespace's failed write (`err`) or its end; logs when a namespace starts failing, fails differently or recovers. */
  private setFailing(ns: string, err: unknown): void {
    const was = this.failing.get(ns);
    if (err === undefined) {
      if (!was) return;
      this.failing.delete(ns);
      this.o.metrics?.failingNamespaces(this.failing.size);
      this.o.logger?.info({ namespace: ns, failures: was.failures }, 'audit: PolicyReport written again after failed writes');
      return;
    }
    const problem = describeKubeError(err);
    const failures = (was?.failures ?? 0) + 1;
    const delay = Math.min(REPORT_RETRY_MAX_MS, (this.o.intervalMs ?? 5_000) * 2 ** Math.min(failures - 1, 20));
    this.failing.set(ns, { failures, retryAt: this.now() + delay, problem });
    this.o.metrics?.failingNamespaces(this.failing.size);
    if (problem !== was?.problem) {
      this.o.logger?.warn(
        { namespace: ns, err: problem, retryInSeconds: Math.round(delay / 1000) },
        'audit: writing the PolicyReport of a namespace failed; retrying later, other namespaces go on',
      );
    }
  }

  /** Namespaces whose last report write failed (tests). */
  failingNamespaces(): string[] {
    return [...this.failing.keys()];
  }
}
