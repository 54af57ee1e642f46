// The shape of a bench section and its timing helpers. A section is a file `bench/<name>.bench.ts`
// exporting `name` and `run(log)`, which returns rows for the table (or nothing, having logged
// its own lines). bench/main.ts finds every section beside itself and runs them one by one.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

export interface BenchResult {
  /** What was measured, e.g. "parse: 3-network simple value". */
  name: string;
  /** Throughput, operations per second of wall-clock time. */
  opsPerSec?: number;
  /** Throughput per second of this process's CPU time: the "one core" figure, robust to a busy machine. */
  opsPerCpuSec?: number;
  /** Duration of one operation, milliseconds (for slow operations timed individually), wall clock and CPU. */
  ms?: number;
  cpuMs?: number;
  /** Latency percentiles of one operation, microseconds. */
  p50Us?: number;
  p99Us?: number;
  /** The target, as text ("≥ 200,000/s"), and whether it was met. */
  target?: string;
  met?: boolean;
  notes?: string;
}

export interface BenchSection {
  name: string;
  run(log: (line: string) => void): Promise<BenchResult[] | undefined>;
}

export interface ThroughputOptions {
  /** Time spent before measuring, so the JIT has settled. */
  warmupMs?: number;
  /** Time spent measuring. */
  durationMs?: number;
  /** Calls per timed sample (a single call is too short for the clock). */
  batch?: number;
}

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Calls `fn` repeatedly: ops/s over the measuring window, and p50/p99 per call (from batch means). */
export function measureThroughput(
  fn: () => unknown,
  options: ThroughputOptions = {},
): { opsPerSec: number; opsPerCpuSec: number; p50Us: number; p99Us: number } {
  const { warmupMs = 300, durationMs = 1000, batch = 100 } = options;
  let sink: unknown;
  const warmEnd = performance.now() + warmupMs;
  while (performance.now() < warmEnd) for (let i = 0; i < batch; i++) sink = fn();
  const samples: number[] = [];
  let ops = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let now = start;
  while (now - start < durationMs) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) sink = fn();
    now = performance.now();
    samples.push(((now - t0) * 1000) / batch);
    ops += batch;
  }
  const cpu = process.cpuUsage(cpu0);
  keep(sink);
  samples.sort((a, b) => a - b);
  return {
    opsPerSec: ops / ((now - start) / 1000),
    opsPerCpuSec: ops / ((cpu.user + cpu.system) / 1e6),
    p50Us: percentile(samples, 50),
    p99Us: percentile(samples, 99),
  };
}

/** Times single calls of a slow operation: median and max (wall clock), median CPU time, over `runs`. */
export function timeEach(fn: () => unknown, runs = 7, warmup = 2): { medianMs: number; maxMs: number; medianCpuMs: number } {
  let sink: unknown;
  for (let i = 0; i < warmup; i++) sink = fn();
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    sink = fn();
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpuTimes.push((c.user + c.system) / 1000);
  }
  keep(sink);
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  return { medianMs: percentile(times, 50), maxMs: times[times.length - 1]!, medianCpuMs: percentile(cpuTimes, 50) };
}

// Keeps results observable so the optimizer cannot drop the calls.
let kept: unknown;
function keep(v: unknown): void {
  kept = v;
}
export const lastKept = (): unknown => kept;

/** Formats a table of results. */
export function formatTable(section: string, rows: readonly BenchResult[]): string {
  const n = (x: number): string => Math.round(x).toLocaleString('en');
  const fmt = (r: BenchResult): string[] => [
    r.name,
    r.opsPerSec !== undefined
      ? `${n(r.opsPerSec)}/s${r.opsPerCpuSec !== undefined ? ` (${n(r.opsPerCpuSec)}/CPU-s)` : ''}`
      : r.ms !== undefined
        ? `${r.ms.toFixed(2)} ms${r.cpuMs !== undefined ? ` (${r.cpuMs.toFixed(2)} CPU-ms)` : ''}`
        : '',
    r.p50Us !== undefined ? `p50 ${r.p50Us.toFixed(2)} µs, p99 ${r.p99Us?.toFixed(2)} µs` : '',
    r.target ? `${r.target} ${r.met ? 'ok' : 'MISSED'}` : '',
    r.notes ?? '',
  ];
  const cells = [['measure', 'result', 'latency', 'target', 'notes'], ...rows.map(fmt)];
  const widths = cells[0]!.map((_, c) => Math.max(...cells.map((row) => row[c]!.length)));
  const line = (row: string[]): string =>
    row
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  return [
    `## ${section} (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs)`,
    line(cells[0]!),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.slice(1).map(line),
  ].join('\n');
}
