// Policy benchmarks: evaluation cost with 100 policies, and the memory of the uniqueness index
// at 100,000 pods (target: < 100 MB over the baseline), measured in a child process started
// with --expose-gc against its own baseline. Run alone: npx tsx bench/main.ts policy.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseNetworks } from '../src/annotation/index.js';
import { AddressIndex, NadUsage, PolicyEngine, loadPolicyDocuments, policySet, type PolicyInput } from '../src/policy/index.js';
import { indexPod } from '../src/policy/pod-source.js';
import { measureThroughput, type BenchResult } from './harness.js';

export const name = 'policy';

const PODS = 100_000;
const RSS_TARGET_MB = 100;

const hex = (n: number, bytes: number): string =>
  Array.from({ length: bytes }, (_, i) => ((n >>> (8 * (bytes - 1 - i))) & 0xff).toString(16).padStart(2, '0')).join(':');

/** 100 policies with every rule; those with an even number select namespaces labelled team=t0. */
function hundredPolicies(): string {
  const docs: string[] = [];
  for (let i = 0; i < 100; i++) {
    docs.push(`apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: p${String(i).padStart(3, '0')}}
spec:
  namespaceSelector:
    matchExpressions: [{key: team, operator: In, values: [t${i % 2}, x]}]
  exemptNamespaces: ["break-glass-*"]
  rules:
    allowedNetworks: {ownNamespace: true, globalNamespaces: [default], networks: ["infra/sriov-*", "*/shared-?"]}
    maxAttachments: {max: 8}
    requestedFields: {forbidden: [deviceID], allowedSubjects: {groups: [net-admins]}}
    hardwareAddresses: {macPrefixes: ["02:00"], guidRanges: [{from: "00:11:22:33:00:00:00:00", to: "00:11:22:33:ff:ff:ff:ff"}]}
    uniqueAddresses: {mac: Network, infiniband-guid: Cluster}
    interfaceNames: {allowed: ["net*", "ib*"]}
    networkExists: {action: Warn}
`);
  }
  return docs.join('---\n');
}

/** What the pod watch delivers: one MAC per pod (100 networks), a GUID on every second pod. */
function populate(index: AddressIndex, pods: number, usage?: NadUsage): void {
  for (let n = 0; n < pods; n++) {
    const nets: Array<Record<string, string>> = [{ name: `net-${n % 100}`, mac: `02:00:${hex(n, 4)}` }];
    if (n % 2 === 0) nets.push({ name: 'ib', 'infiniband-guid': `00:11:22:33:${hex(n, 4)}` });
    const annotations = { 'k8s.v1.cni.cncf.io/networks': JSON.stringify(nets) };
    indexPod(
      index,
      {
        metadata: {
          namespace: `ns-${n % 500}`,
          name: `pod-${n}`,
          uid: `0f8fad5b-d9cb-469f-a165-${String(n).padStart(12, '0')}`,
          annotations,
        },
      },
      usage,
    );
  }
}

function evaluationInput(): PolicyInput {
  const annotation = JSON.stringify([
    { name: 'net-a', interface: 'net1', mac: '02:00:aa:bb:cc:dd' },
    { name: 'sriov-1', namespace: 'infra', interface: 'net2' },
    { name: 'ib', interface: 'ib0', 'infiniband-guid': '00:11:22:33:aa:bb:cc:dd' },
    { name: 'shared-1', namespace: 'default' },
  ]);
  return {
    operation: 'CREATE',
    namespace: 'team-a',
    namespaceLabels: { 'kubernetes.io/metadata.name': 'team-a', team: 't0' },
    userInfo: { username: 'alice', groups: ['dev'] },
    pod: { name: 'p', uid: 'u' },
    template: false,
    dryRun: false,
    annotationPath: 'metadata.annotations[k8s.v1.cni.cncf.io/networks]',
    networks: parseNetworks(annotation, { namespace: 'team-a' }).networks,
    nads: () => ({ status: 'not-found' }),
    builtin: [],
  };
}

function evaluation(): BenchResult[] {
  const { policies, errors } = loadPolicyDocuments(hundredPolicies(), 'bench');
  if (errors.length) throw new Error(errors[0]!.message);
  const index = new AddressIndex();
  populate(index, PODS);
  const input = evaluationInput();
  const rows: BenchResult[] = [];
  for (const [label, set] of [
    ['evaluate: 100 policies (50 apply, 7 rules each), 4 attachments, 100,000-pod index', policySet(policies)],
    ['evaluate: 1 policy, same request', policySet(policies.slice(0, 1))],
    ['evaluate: no policy', policySet([])],
  ] as const) {
    const engine = new PolicyEngine({ policies: set, index });
    rows.push({ name: label, ...measureThroughput(() => engine.evaluate(input), { warmupMs: 300, durationMs: 1500, batch: 20 }) });
  }
  return rows;
}

interface RssReport {
  rssMB: number;
  heapMB: number;
  ms: number;
  pods: number;
  addresses: number;
}

function rssChild(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  const base = process.memoryUsage();
  const index = new AddressIndex();
  // With --usage: also which NADs each pod uses (what serve keeps for NAD DELETE warnings).
  const usage = process.argv.includes('--usage') ? new NadUsage() : undefined;
  const start = performance.now();
  populate(index, PODS, usage);
  const ms = performance.now() - start;
  gc();
  gc();
  const after = process.memoryUsage();
  const report: RssReport = {
    rssMB: (after.rss - base.rss) / 2 ** 20,
    heapMB: (after.heapUsed - base.heapUsed) / 2 ** 20,
    ms,
    ...index.stats(),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

function indexMemory(withUsage: boolean): BenchResult {
  const self = fileURLToPath(import.meta.url);
  const args = [...process.execArgv, '--expose-gc', self, '--index-rss', ...(withUsage ? ['--usage'] : [])];
  const child = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`index RSS child failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as RssReport;
  return {
    name: `address index${withUsage ? ' + NAD usage' : ''}: ${r.pods.toLocaleString('en')} pods, ${r.addresses.toLocaleString('en')} addresses`,
    ms: r.ms,
    target: `< ${RSS_TARGET_MB} MB RSS over baseline`,
    met: r.rssMB < RSS_TARGET_MB,
    notes: `+${r.rssMB.toFixed(1)} MB RSS, +${r.heapMB.toFixed(1)} MB heap; ms = filling it from annotations (parse included)`,
  };
}

export async function run(log: (line: string) => void): Promise<BenchResult[]> {
  log('Evaluation with uniqueness against a 100,000-pod index; the index measured in a child process.');
  return [...evaluation(), indexMemory(false), indexMemory(true)];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--index-rss')) rssChild();
