// Issue 24, finding 3, replayed at the production heap cap (`--max-old-space-size=192
// --max-semi-space-size=1`, as the Deployment): five live pods carrying the hostile annotation (a
// 200 KB key in the path of 100 errors each) made the PolicyReport writer build a ~100 MB report
// and die of OOM (again after each restart), and `netattach audit -o json` on the same pods write
// 100 MB (516 MB RSS).
//
// The writer runs in a child process (reports-writer.ts: the background audit and the publisher
// as serve wires them, over an in-memory apiserver), once with five ordinary pods (the baseline,
// measured in the same run) and once with the hostile ones. `netattach audit` runs as the CLI.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PRODUCTION_NODE_OPTIONS } from '../../bench/hostile-lib.js';
import { hostileNetworks } from '../audit/helpers.js';

t.setTimeout(300_000);
const ROOT = resolve(import.meta.dirname, '../..');
/** The production heap cap (manifests/base/deployment.yaml). */
const HEAP_CAP_MB = 192;
/** etcd's default object limit: a report must stay well under it. */
const ETCD_LIMIT = 1.5 * 1024 * 1024;

interface Run {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Peak RSS of the child, from /proc (VmHWM), in MB. */
  peakRssMb: number;
}

/** Runs node with the production heap cap; `stdout` is kept whole only up to 8 MB (its size is counted). */
function runNode(args: string[], stdin?: string): Promise<Run & { stdoutBytes: number }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: `${PRODUCTION_NODE_OPTIONS} --expose-gc` },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stdoutBytes = 0;
    let stderr = '';
    let peakRssMb = 0;
    const poll = setInterval(() => {
      try {
        const kb = Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
        peakRssMb = Math.max(peakRssMb, kb / 1024);
      } catch {
        // gone
      }
    }, 50);
    child.stdout.on('data', (d: Buffer) => {
      stdoutBytes += d.length;
      if (stdout.length < 8 << 20) stdout += String(d);
    });
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + String(d)).slice(-2000)));
    child.stdin.end(stdin ?? '');
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      done({ code, signal, stdout, stdoutBytes, stderr, peakRssMb });
    });
  });
}

t.test(
  'the report writer with five hostile pods: alive under the heap cap, heap far below it, every namespace written and bounded',
  async (t) => {
    const writer = join(ROOT, 'test/hostile/reports-writer.ts');
    const baseline = await runNode([writer, 'normal']);
    t.equal(baseline.code, 0, `baseline: ${baseline.stderr}`);
    const hostile = await runNode([writer, 'hostile']);
    t.equal(hostile.code, 0, `alive (was: OOM in JSON.stringify): ${hostile.signal ?? ''} ${hostile.stderr.slice(-600)}`);
    const b = JSON.parse(baseline.stdout) as { written: Record<string, number>; peakMb: number; baseMb: number };
    const h = JSON.parse(hostile.stdout) as { written: Record<string, number>; peakMb: number; baseMb: number };
    t.same(Object.keys(h.written).sort(), ['evil', 'tenant'], "both namespaces' reports written");
    t.ok(h.written['evil']! <= ETCD_LIMIT / 2, `hostile namespace's report: ${h.written['evil']} bytes (was ~100 MB)`);
    t.equal(h.written['tenant'], b.written['tenant'], "the tenant's report is the same as beside ordinary pods");
    const growth = h.peakMb - h.baseMb;
    const baseGrowth = b.peakMb - b.baseMb;
    t.ok(
      growth < HEAP_CAP_MB / 4,
      `heap growth judging and writing: ${growth.toFixed(1)} MB (baseline ${baseGrowth.toFixed(1)} MB) < a quarter of the ${HEAP_CAP_MB} MB cap`,
    );
  },
);

t.test('netattach audit -o json on the five hostile pods: alive under the heap cap, a bounded output, exit 1', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-audit-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'pods.json');
  const pod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: 'evil', name, uid: `u-${name}`, annotations: { 'k8s.v1.cni.cncf.io/networks': hostileNetworks() } },
    spec: { containers: [{ name: 'c' }] },
  });
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: 5 }, (_, i) => pod(`h-${i}`)) }));
  const r = await runNode([join(ROOT, 'src/cli/main.ts'), 'audit', '-o', 'json', file]);
  t.equal(r.code, 1, `exit 1: a pod breaks an Enforce rule (${r.signal ?? ''} ${r.stderr.slice(-600)})`);
  t.ok(r.stdoutBytes <= 1024 * 1024, `output ${r.stdoutBytes} bytes (was 100 MB)`);
  t.ok(r.peakRssMb < 250, `peak RSS ${r.peakRssMb.toFixed(0)} MB < 250 MB (was 516 MB)`);
  const doc = JSON.parse(r.stdout) as { summary: { fail: number }; findings: unknown[]; omitted?: Array<{ findings: number }> };
  t.equal(doc.findings.length + (doc.omitted?.[0]?.findings ?? 0), doc.summary.fail, 'printed and omitted findings add up to the summary');
});
