// The PolicyReport writer of `serve` (the background audit and the ReportPublisher, wired as
// serve wires them) over an in-memory apiserver, run by test/hostile/reports.test.ts in a child
// process with the production heap cap. Argument: `hostile` (five pods carrying issue 24's
// annotation in namespace evil) or `normal` (five ordinary failing pods there instead); both have
// a tenant namespace beside. Prints one JSON line: the bytes of each report written, and the
// peak of the heap used while judging and writing.
import { getHeapStatistics } from 'node:v8';
import { BackgroundAudit, ReportPublisher } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { KubeRequestError, type KubeTransport } from '../../src/kube/index.js';
import { AddressIndex, EMPTY_POLICY_SET, PolicyEngine } from '../../src/policy/index.js';
import { hostileNetworks } from '../audit/helpers.js';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const hostile = process.argv[2] === 'hostile';
let peak = 0;
const sample = (): void => void (peak = Math.max(peak, getHeapStatistics().used_heap_size));
const sampler = setInterval(sample, 5);

const written = new Map<string, number>();
const transport: KubeTransport = {
  async getJson(path: string) {
    sample();
    if (path === '/apis/wgpolicyk8s.io/v1alpha2') return { resources: [{ name: 'policyreports' }] };
    if (path === '/apis/wgpolicyk8s.io/v1alpha2/policyreports') return { items: [] };
    throw new KubeRequestError(404, `${path} not found`);
  },
  async watch() {},
  async patchJson(path: string, body: unknown) {
    sample();
    const size = Buffer.byteLength(JSON.stringify(body));
    sample();
    if (path.includes('/policyreports/')) written.set(/namespaces\/([^/]+)\//.exec(path)![1]!, size);
    return body;
  },
};

const audit = new BackgroundAudit({
  // The audit keeps no 200 KB text (kept-text.ts): lifted here, so the pods are judged and their findings written.
  texts: { podChars: 256 * 1024 },
  nads: { get: () => undefined, list: () => [], synced: () => true },
  namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
  engine: new PolicyEngine({ index: new AddressIndex(), policies: EMPTY_POLICY_SET }),
  config: DEFAULT_ADMISSION_CONFIG,
  podsUsingNad: () => [],
  ready: () => true,
});
for (let i = 0; i < 5; i++)
  audit.upsert({
    metadata: {
      namespace: 'evil',
      name: `h-${i}`,
      uid: `u-h-${i}`,
      annotations: { [NETWORKS]: hostile ? hostileNetworks() : 'missing-net' },
    },
  });
for (let i = 0; i < 5; i++)
  audit.upsert({ metadata: { namespace: 'tenant', name: `du-${i}`, uid: `u-du-${i}`, annotations: { [NETWORKS]: 'missing-net' } } });
(globalThis as { gc?: () => void }).gc?.();
const base = getHeapStatistics().used_heap_size;
peak = base;
const started = process.cpuUsage();
audit.drain();
sample();
const publisher = new ReportPublisher(transport, audit, { leaseNamespace: 'netattach-system', identity: 'me' });
for (let round = 0; round < 3 && written.size < 2; round++) await publisher.round();
sample();
clearInterval(sampler);
const cpu = process.cpuUsage(started);
console.log(
  JSON.stringify({
    written: Object.fromEntries(written),
    baseMb: base / 2 ** 20,
    peakMb: peak / 2 ** 20,
    cpuMs: (cpu.user + cpu.system) / 1000,
  }),
);
