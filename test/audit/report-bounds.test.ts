// Issue 24, finding 3: a PolicyReport stays well under etcd's object limit whatever the pods hold.
// Hostile pods (a 200 KB key in the path of 100 errors each) made a 100 MB report (now 32 findings
// are kept per pod, the last counting the rest); 1,000 results
// with the longest names made 1.27 MB. Messages are cut, results capped by count and bytes, the
// summary counts every finding and an annotation counts the results left out.
import t from 'tap';
import { policyReport, TRUNCATED_ANNOTATION, type PodAudit } from '../../src/audit/index.js';
import { auditWith, hostileNetworks, live, longName, LONG_NAMESPACE } from './helpers.js';

/** etcd's default object limit (--max-request-bytes 1.5 MiB): a report must stay well under it. */
const ETCD_LIMIT = 1.5 * 1024 * 1024;
const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');

t.test('five hostile pods: findings kept and the report written are bounded; the summary counts every finding', async (t) => {
  // The audit keeps no 200 KB text (kept-text.ts); the bound lifted, what judging one gives is bounded still.
  const audit = auditWith(
    Array.from({ length: 5 }, (_, i) => ({ ns: 'evil', name: `h-${i}`, networks: hostileNetworks() })),
    { podChars: 256 * 1024 },
  );
  const audits = audit.namespaceAudits('evil');
  const findings = audits.flatMap((a) => a.findings);
  t.equal(findings.length, 5 * 32, `32 findings kept per pod (MAX_POD_FINDINGS; ${findings.length})`);
  t.equal(findings.filter((f) => f.rule === 'moreFindings').length, 5, 'the last one of each counting the rest');
  t.ok(Math.max(...findings.map((f) => Buffer.byteLength(f.message))) <= 1024, 'messages kept by the audit are at most 1 KiB');
  // The 200 KB key is cut where the path is built (src/field), so the message keeps its point.
  t.match(
    findings.find((f) => f.rule === 'annotation')?.message,
    /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.cni-args\.k{96}\.\.\.\(200000 chars\)\[\d+\]: Invalid value: "1e400"/,
  );
  const report = policyReport('evil', audits, { now: 1 });
  t.ok(bytes(report) <= ETCD_LIMIT / 2, `report ${bytes(report)} bytes`);
  const total = report.summary.fail + report.summary.error + report.summary.warn + report.summary.skip;
  t.equal(total, findings.length, 'the summary counts all findings');
  t.equal(
    Number(report.metadata.annotations?.[TRUNCATED_ANNOTATION] ?? '0'),
    findings.length - report.results.length,
    'the annotation counts the results left out',
  );
});

t.test('huge messages from anywhere are cut in the report itself', async (t) => {
  const huge = (i: number): PodAudit => ({
    pod: live('a', `p${i}`),
    findings: [
      { policy: 'p', rule: 'r', action: 'Enforce', result: 'fail', severity: 'high', message: `start-${i}-${'x'.repeat(1_000_000)}-end` },
    ],
  });
  const report = policyReport(
    'a',
    Array.from({ length: 20 }, (_, i) => huge(i)),
    { now: 1 },
  );
  t.ok(bytes(report) <= 64 * 1024, `20 results of 1 MB messages: ${bytes(report)} bytes`);
  t.equal(report.results.length, 20);
  t.match(report.results[0]!.message, /^start-0-x+\.\.\.\(\d+ bytes cut\)\.\.\.x+-end$/);
});

t.test('10,000 failing pods with the longest names: a bounded report, the summary true, the rest counted', async (t) => {
  const audit = auditWith(
    Array.from({ length: 10_000 }, (_, i) => ({ ns: LONG_NAMESPACE, name: longName(i), networks: `a-network-that-does-not-exist-${i}` })),
  );
  const report = policyReport(LONG_NAMESPACE, audit.namespaceAudits(LONG_NAMESPACE), { now: 1 });
  t.ok(bytes(report) <= ETCD_LIMIT / 2, `report ${bytes(report)} bytes`);
  t.equal(report.summary.fail, 10_000);
  t.ok(report.results.length >= 300, `the worst results kept (${report.results.length})`);
  t.equal(Number(report.metadata.annotations?.[TRUNCATED_ANNOTATION]), 10_000 - report.results.length);
});
