// The alert rules and the Grafana dashboard parse, and every metric they name is one netattach
// exports: the names come from the registry serve builds (server, policy and audit metrics, and
// the process/Node.js defaults), not from a list kept by hand.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createMetrics } from '../../src/server/index.js';
import { registerPolicyMetrics } from '../../src/policy/index.js';
import { registerAuditMetrics } from '../../src/audit/index.js';
import { MANIFESTS, readDocuments, kustomization, type Obj } from './load.js';

async function exportedNames(): Promise<Set<string>> {
  const registry = new Registry();
  registerPolicyMetrics(registry);
  registerAuditMetrics(registry);
  createMetrics(() => undefined, registry);
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    names.add(m.name);
    // Histograms and summaries are queried through their series.
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    if (String(m.type) === 'summary') for (const s of ['_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

// PromQL words that are not metric names.
const PROMQL = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'increase',
  'irate',
  'histogram_quantile',
  'absent',
  'time',
  'by',
  'without',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'topk',
  'bottomk',
  'delta',
  'deriv',
  'clamp_min',
  'clamp_max',
]);

/** The metric names an expression reads: label matchers, groupings, ranges, strings and numbers removed first. */
export function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b\d+(\.\d+)?([eE][+-]?\d+)?\b/g, '');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL.has(w));
}

t.test('metricsIn finds the metric names of an expression and nothing else', async (t) => {
  t.same(metricsIn('histogram_quantile(0.99, sum by (le) (rate(netattach_x_bucket{a="b"}[5m]))) > 0.5'), ['netattach_x_bucket']);
  t.same(metricsIn('max(a) == 1 and sum by (policy, rule) (b{action="Enforce"}) == 0'), ['a', 'b']);
  t.same(metricsIn('time() - max(c) > 1800'), ['c']);
});

t.test('every alert expression names only exported metrics, and each names at least one', async (t) => {
  const names = await exportedNames();
  const docs = readDocuments(join(MANIFESTS, 'monitoring', 'prometheus-rules.yaml'));
  t.equal(docs.length, 1);
  t.same(docs[0]!.errors, []);
  const rule = docs[0]!.value as Obj;
  t.equal(rule.kind, 'PrometheusRule');
  const rules = (rule.spec.groups as Obj[]).flatMap((g) => g.rules as Obj[]);
  t.ok(rules.length >= 10);
  const alerts = new Set<string>();
  for (const r of rules) {
    t.match(r.alert, /^Netattach[A-Za-z]+$/);
    t.notOk(alerts.has(r.alert), `${r.alert} is unique`);
    alerts.add(r.alert);
    t.match(r.labels?.severity, /^(critical|warning|info)$/, `${r.alert} severity`);
    t.type(r.annotations?.summary, 'string', `${r.alert} summary`);
    const used = metricsIn(r.expr);
    t.ok(used.length > 0, `${r.alert}: names a metric`);
    for (const m of used) t.ok(names.has(m), `${r.alert}: ${m} is exported by netattach`);
  }
});

t.test('the Grafana dashboard is JSON whose every query names only exported metrics', async (t) => {
  const names = await exportedNames();
  const dash = JSON.parse(readFileSync(join(MANIFESTS, 'monitoring', 'grafana-dashboard.json'), 'utf8')) as Obj;
  t.equal(dash.uid, 'netattach');
  const panels = dash.panels as Obj[];
  t.ok(panels.length >= 10);
  const ids = new Set(panels.map((p) => p.id));
  t.equal(ids.size, panels.length, 'panel ids are unique');
  for (const p of panels) {
    t.ok((p.targets as Obj[]).length > 0, `${p.title}: has queries`);
    for (const target of p.targets as Obj[]) {
      const used = metricsIn(target.expr);
      t.ok(used.length > 0, `${p.title}: names a metric`);
      for (const m of used) t.ok(names.has(m), `${p.title}: ${m} is exported by netattach`);
    }
  }
  // The metrics one alerts on are on the dashboard too.
  const all = panels.flatMap((p) => (p.targets as Obj[]).map((x) => x.expr as string)).join('\n');
  for (const m of [
    'netattach_audit_findings',
    'netattach_admission_would_deny_total',
    'netattach_admission_denials_total',
    'netattach_audit_report_writes_total',
  ])
    t.match(all, m);
});

t.test('the monitoring kustomization ships both', async (t) => {
  const k = kustomization(join(MANIFESTS, 'monitoring'));
  t.same(k.resources, ['prometheus-rules.yaml']);
  t.same(k.configMapGenerator[0].files, ['grafana-dashboard.json']);
});
