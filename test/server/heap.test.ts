// The near-cap signal: readiness stays true but says "degraded" past the threshold, the gauge
// reports the ratio, and the shipped alert fires at the same threshold.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Registry } from 'prom-client';
import { createMetrics, HEAP_DEGRADED_RATIO, heapCheck, heapRatio, heapUse, verboseText } from '../../src/server/index.js';
import { readiness } from '../../src/server/health-app.js';

const MiB = 2 ** 20;

t.test('heapCheck: ready below the threshold, degraded (still ready) at and past it, with the figures', async (t) => {
  let used = 100 * MiB;
  const check = heapCheck(() => ({ used, limit: 200 * MiB }));
  t.equal(check(), true, '50 %');
  used = 159 * MiB;
  t.equal(check(), true, '79.5 %');
  used = 160 * MiB;
  t.match(check(), { degraded: /^heap at 80 % of its cap \(160 of 200 MiB; degraded from 80 %\): raise the memory sizing/ });
  used = 190 * MiB;
  const r = readiness({ heap: check });
  t.equal(r.ready, true, 'a replica near its cap stays ready: failing them all at once would be an outage');
  t.same(r.degraded, ['heap']);
  t.match(verboseText(r), /^\[\+\]heap ok \(degraded: heap at 95 % of its cap \(190 of 200 MiB/);
  t.match(verboseText(r), /readyz check passed \(degraded: heap\)\n$/);
  t.equal(heapCheck(() => ({ used: 49, limit: 100 }), 0.5)(), true, 'at a threshold of 0.5, 49 % is fine');
  t.not(heapCheck(() => ({ used: 50, limit: 100 }), 0.5)(), true, 'at a threshold of 0.5, 50 % is degraded');
  t.equal(heapRatio({ used: 1, limit: 0 }), 0, 'no limit known: 0, not NaN');
});

t.test('this process: the ratio is the live heap over the cap', async (t) => {
  const h = heapUse();
  t.ok(h.limit > h.used && h.used > 0, `${h.used} used of ${h.limit}`);
  const registry = new Registry();
  createMetrics(() => undefined, registry);
  const text = await registry.metrics();
  const m = /^netattach_heap_used_ratio ([0-9.e-]+)$/m.exec(text);
  t.ok(m, 'the gauge is exported');
  const ratio = Number(m![1]);
  t.ok(ratio > 0 && ratio < 1, `ratio ${ratio}`);
});

t.test('the NetattachHeapNearCap alert reads the gauge at the readiness threshold', async (t) => {
  const parsed = parseAllDocuments(readFileSync(join(import.meta.dirname, '../../manifests/monitoring/prometheus-rules.yaml'), 'utf8'));
  t.same(
    parsed.flatMap((d) => d.errors.map(String)),
    [],
    'the rules file parses',
  );
  const docs = parsed.map(
    (d) => d.toJS() as { spec?: { groups?: Array<{ rules: Array<{ alert?: string; expr: string; for?: string }> }> } },
  );
  const rules = docs.flatMap((d) => d.spec?.groups ?? []).flatMap((g) => g.rules);
  const alert = rules.find((r) => r.alert === 'NetattachHeapNearCap');
  t.ok(alert, 'shipped');
  const m = /^max by \(pod\) \(netattach_heap_used_ratio\) > ([0-9.]+)$/.exec(alert!.expr);
  t.ok(m, alert!.expr);
  t.equal(Number(m![1]), HEAP_DEGRADED_RATIO, 'fires where readiness turns degraded');
  t.ok(alert!.for, 'not on one scrape (a GC may be due)');
});
