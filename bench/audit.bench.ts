// The background audit at 100,000 live pods: one full pass (time, CPU, memory of what the audit
// keeps), one over 10,000 NADs judged themselves, and admission latency while the audit runs at its default rate. Both in child
// processes: the pass with --expose-gc for its memory, the server so that the load generator
// (this process) does not share its event loop. Run alone: npx tsx bench/main.ts audit
import { spawn, spawnSync } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import pino from 'pino';
import { BackgroundAudit } from '../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../src/admission/index.js';
import { generateCertificates, writeCertificateSet } from '../src/certs/index.js';
import { StaticNadSource } from '../src/nads/index.js';
import { AddressIndex, NadUsage, PolicyEngine, loadPolicyDocuments, policySet } from '../src/policy/index.js';
import { indexPod } from '../src/policy/pod-source.js';
import { createServer } from '../src/server/index.js';
import { paced } from './https-client.js';
import type { BenchResult } from './harness.js';

export const name = 'audit';

const PODS = 100_000;
const NETS = 100;
const self = fileURLToPath(import.meta.url);
const hex = (n: number, bytes: number): string =>
  Array.from({ length: bytes }, (_, i) => ((n >>> (8 * (bytes - 1 - i))) & 0xff).toString(16).padStart(2, '0')).join(':');

/** 10 policies over every namespace: networks, MAC prefixes, unique MACs, interface names. */
function policies() {
  const docs = Array.from(
    { length: 10 },
    (_, i) => `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: p${i}}
spec:
  rules:
    allowedNetworks: {ownNamespace: true, networks: ["*/net-*"]}
    hardwareAddresses: {macPrefixes: ["02:00"]}
    uniqueAddresses: {mac: Network}
    interfaceNames: {allowed: ["net*"]}
`,
  );
  const { policies: out, errors } = loadPolicyDocuments(docs.join('---\n'), 'bench');
  if (errors.length) throw new Error(errors[0]!.message);
  return policySet(out);
}

/** `count` NAD objects like the bench's networks; with `broken`, every 100th has a config the NAD webhook denies (a plugin without type). */
const nadObjects = (count: number, broken = false) =>
  Array.from({ length: count }, (_, n) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: {
      name: `net-${n}`,
      namespace: 'infra',
      uid: `nad-${n}`,
      resourceVersion: String(n + 1),
      annotations: { 'k8s.v1.cni.cncf.io/resourceName': `intel.com/sriov_${n % 10}` },
    },
    spec: {
      config: JSON.stringify({
        cniVersion: '1.0.0',
        name: `net-${n}`,
        plugins: broken && n % 100 === 99 ? [{ name: 'x' }] : [{ type: 'sriov' }, { type: 'tuning', capabilities: { mac: true } }],
      }),
    },
  }));

function nads(): StaticNadSource {
  return new StaticNadSource(nadObjects(NETS));
}

/** NADs judged themselves (fed as the NAD cache's watch feeds them): 10,000, unthrottled. */
const NAD_COUNT = 10_000;
function nadPass(): { ms: number; cpuMs: number; withFindings: number } {
  const audit = new BackgroundAudit({
    nads: new StaticNadSource([]),
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    engine: new PolicyEngine({ index: new AddressIndex() }),
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: () => [],
    ready: () => true,
  });
  const objects = nadObjects(NAD_COUNT, true);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  audit.nadWatch.resync();
  for (const o of objects) audit.nadWatch.upsert(o);
  audit.nadWatch.resynced();
  audit.drain();
  const cpu = process.cpuUsage(cpu0);
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, withFindings: audit.allNadFindings().length };
}

/** What serve holds: the index, the NAD usage and the audit, fed like the pod watch feeds them. 1% of the pods break a rule. */
function world(nadSource: StaticNadSource) {
  const index = new AddressIndex();
  const usage = new NadUsage();
  const engine = new PolicyEngine({ index, policies: policies() });
  const audit = new BackgroundAudit({
    nads: nadSource,
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    engine,
    index,
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: (ns, n) => usage.podsUsing(ns, n),
    ready: () => true,
  });
  const fill = (): void => {
    for (let n = 0; n < PODS; n++) {
      const prefix = n % 100 === 0 ? '06:00' : '02:00';
      const annotations = {
        'k8s.v1.cni.cncf.io/networks': JSON.stringify([
          { name: `net-${n % NETS}`, namespace: 'infra', interface: 'net1', mac: `${prefix}:${hex(n, 4)}` },
        ]),
      };
      const obj = {
        metadata: {
          namespace: `ns-${n % 500}`,
          name: `pod-${n}`,
          uid: `0f8fad5b-d9cb-469f-a165-${String(n).padStart(12, '0')}`,
          annotations,
        },
      };
      indexPod(index, obj, usage);
      audit.upsert(obj);
    }
  };
  return { index, usage, engine, audit, fill };
}

interface PassReport {
  podsMs: number;
  passMs: number;
  passCpuMs: number;
  withFindings: number;
  watchRssMB: number;
  auditRssMB: number;
  auditHeapMB: number;
  nads: { ms: number; cpuMs: number; withFindings: number };
}

/** Child: fill the index and the audit, then one full pass; memory with and without the audit's state. */
async function passChild(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const nadSource = nads();
  gc();
  const base = process.memoryUsage();
  const w = world(nadSource);
  let t0 = performance.now();
  w.fill();
  const podsMs = performance.now() - t0;
  gc();
  const filled = process.memoryUsage();
  t0 = performance.now();
  const cpu0 = process.cpuUsage();
  w.audit.drain();
  const cpu = process.cpuUsage(cpu0);
  const passMs = performance.now() - t0;
  gc();
  const after = process.memoryUsage();
  const report: PassReport = {
    podsMs,
    passMs,
    passCpuMs: (cpu.user + cpu.system) / 1000,
    withFindings: w.audit.allFindings().length,
    watchRssMB: (filled.rss - base.rss) / 2 ** 20,
    auditRssMB: (after.rss - base.rss) / 2 ** 20,
    auditHeapMB: (after.heapUsed - base.heapUsed) / 2 ** 20,
    nads: nadPass(),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

/** Child: the HTTPS server with 100,000 live pods indexed; with --audit, the background audit starts judging them all. */
async function serveChild(withAudit: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-audit-bench-'));
  await writeCertificateSet(dir, generateCertificates({ service: 'netattach', namespace: 'netattach-system', sans: ['127.0.0.1'] }));
  const nadSource = nads();
  const w = world(nadSource);
  w.fill();
  const server = await createServer(
    {
      host: '127.0.0.1',
      port: 0,
      healthPort: 0,
      tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
      bodyLimit: 4 << 20,
      admission: DEFAULT_ADMISSION_CONFIG,
      shutdownGraceMs: 1000,
    },
    {
      nadSource,
      policy: w.engine,
      reservations: w.index,
      logger: pino({ level: 'silent' }),
      namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    },
  );
  const { url } = await server.listen();
  if (withAudit) w.audit.start();
  // How long a request can wait behind other work on the event loop (the audit's slices among it).
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  process.stdout.write(JSON.stringify({ url, dir }) + '\n');
  process.stdin.on('data', () => {
    const cpu = process.cpuUsage(cpu0);
    delay.disable();
    const loopP99Ms = delay.percentile(99) / 1e6;
    process.stdout.write(
      JSON.stringify({ pending: w.audit.pending(), judged: PODS - w.audit.pending(), cpuS: (cpu.user + cpu.system) / 1e6, loopP99Ms }) +
        '\n',
    );
    void server.close().then(() => (rmSync(dir, { recursive: true, force: true }), process.exit(0)));
  });
}

const review = (i: number): string =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `u-${i}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'new-pod',
      namespace: 'ns-1',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'new-pod',
          namespace: 'ns-1',
          annotations: {
            'k8s.v1.cni.cncf.io/networks': JSON.stringify([
              { name: 'net-7', namespace: 'infra', interface: 'net1', mac: '02:00:ff:ff:ff:01' },
            ]),
          },
        },
        spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1' }] },
      },
      dryRun: false,
    },
  });

async function latency(withAudit: boolean, log: (l: string) => void): Promise<BenchResult> {
  const child = spawn(process.execPath, [...process.execArgv, self, '--serve-child', ...(withAudit ? ['--audit'] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let buffer = '';
  let wake: (() => void) | undefined;
  child.stdout!.on('data', (c: Buffer) => {
    buffer += c.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
    wake?.();
  });
  const next = async (): Promise<string> => {
    while (lines.length === 0) await new Promise<void>((r) => (wake = r));
    return lines.shift()!;
  };
  const { url } = JSON.parse(await next()) as { url: string };
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, rejectUnauthorized: false });
  await paced(agent, `${url}/mutate`, review(0), 1000, 2); // warm-up
  const p = await paced(agent, `${url}/mutate`, review(1), 1000, 10);
  child.stdin!.write('done\n');
  const end = JSON.parse(await next()) as { pending: number; judged: number; cpuS: number; loopP99Ms: number };
  agent.destroy();
  const label = `HTTPS /mutate at 1,000/s, 100,000 live pods indexed, ${withAudit ? 'audit running (1,000 pods/s)' : 'no audit'}`;
  log(
    `${label}: p50 ${(p.p50Us / 1000).toFixed(2)} ms, p99 ${(p.p99Us / 1000).toFixed(2)} ms, ${p.failed} failed; server CPU ${end.cpuS.toFixed(1)} s, event-loop delay p99 ${end.loopP99Ms.toFixed(1)} ms${withAudit ? `; audit judged ${end.judged} pods meanwhile` : ''}`,
  );
  return {
    name: label,
    p50Us: p.p50Us,
    p99Us: p.p99Us,
    target: 'p99 < 2 ms',
    met: p.p99Us < 2000 && p.failed === 0,
    notes: `${p.failed} failed; event-loop delay p99 ${end.loopP99Ms.toFixed(1)} ms${withAudit ? `; ${end.judged.toLocaleString('en')} pods judged during the run` : ''}`,
  };
}

function fullPass(log: (l: string) => void): BenchResult[] {
  const child = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', self, '--pass-child'], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`audit pass child failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as PassReport;
  log(
    `full audit pass of ${PODS.toLocaleString('en')} pods (10 policies, 4 rules each): ${(r.passMs / 1000).toFixed(1)} s wall, ${(r.passCpuMs / 1000).toFixed(1)} s CPU ` +
      `(${Math.round(PODS / (r.passCpuMs / 1000)).toLocaleString('en')} pods per CPU-second), ${r.withFindings.toLocaleString('en')} pods with findings; ` +
      `memory: index + NAD usage + audit ${r.auditRssMB.toFixed(0)} MB RSS (${r.auditHeapMB.toFixed(0)} MB heap); index + usage + audit's pod table before the pass ${r.watchRssMB.toFixed(0)} MB RSS; filling ${(r.podsMs / 1000).toFixed(1)} s`,
  );
  log(
    `full audit pass of ${NAD_COUNT.toLocaleString('en')} NADs (judged themselves, as the NAD webhook's CREATE): ${(r.nads.ms / 1000).toFixed(2)} s wall, ${(r.nads.cpuMs / 1000).toFixed(2)} s CPU ` +
      `(${Math.round(NAD_COUNT / (r.nads.cpuMs / 1000)).toLocaleString('en')} NADs per CPU-second), ${r.nads.withFindings} NADs with findings`,
  );
  return [
    {
      name: `audit: one full pass over ${PODS.toLocaleString('en')} live pods, unthrottled (drain)`,
      ms: r.passMs,
      cpuMs: r.passCpuMs,
      opsPerCpuSec: PODS / (r.passCpuMs / 1000),
      notes: `${r.withFindings} pods with findings; +${r.auditRssMB.toFixed(0)} MB RSS for index, NAD usage and audit (+${r.watchRssMB.toFixed(0)} MB before the pass)`,
    },
    {
      name: `audit: one full pass over ${NAD_COUNT.toLocaleString('en')} NADs, unthrottled (drain)`,
      ms: r.nads.ms,
      cpuMs: r.nads.cpuMs,
      opsPerCpuSec: NAD_COUNT / (r.nads.cpuMs / 1000),
      notes: `${r.nads.withFindings} NADs with findings`,
    },
  ];
}

export async function run(log: (line: string) => void): Promise<BenchResult[]> {
  log(
    'The audit judges each live pod and NAD through the admission core; serve throttles it to --audit-rate (1,000 objects/s): 20 ms ticks, slices of at most 2 ms.',
  );
  return [...fullPass(log), await latency(false, log), await latency(true, log)];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--pass-child')) await passChild();
  else if (process.argv.includes('--serve-child')) await serveChild(process.argv.includes('--audit'));
}
