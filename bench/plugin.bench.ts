// The kubectl plugin's start-up, beside the floor of the same Node.js in the same run: `node -e 0`.
// Each command is spawned afresh (as kubectl runs a plugin) and timed to its exit, wall clock:
// - `kubectl netattach --help`: the shell only (src/cli/kubectl.ts loads nothing past the help);
// - `kubectl netattach explain pod NAME` against a local API server (test/kube/fake-apiserver.ts
//   over HTTP, a pod with two networks and their NADs): kubeconfig, probe, reads and the verdict;
// - a refused server: how long until the plugin says so.
// Issue 40's goals, on a quiet machine: help ≤ 150 ms, explain ≤ 500 ms, refused ≤ 1.5 s. They are
// printed as ratios to the floor too, since a busy machine slows all of them alike.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { FakeApiServer } from '../test/kube/fake-apiserver.js';
import { percentile, type BenchResult } from './harness.js';

export const name = 'plugin';

const here = dirname(fileURLToPath(import.meta.url));
// dist/bench -> dist/src/cli/main.js; bench (tsx) -> src/cli/main.ts is not runnable without tsx: use dist.
const MAIN = resolve(here, '..', here.endsWith(join('dist', 'bench')) ? 'src/cli/main.js' : 'dist/src/cli/main.js');
const ROUNDS = Number(process.env.NETATTACH_BENCH_PLUGIN_ROUNDS ?? 15);

function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number; out: string }> {
  const t0 = performance.now();
  return new Promise((done) => {
    execFile(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      done({ ms: performance.now() - t0, code, out: stdout + stderr });
    });
  });
}

async function series(args: string[], env: NodeJS.ProcessEnv, expectCode: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const r = await timeRun(args, env);
    if (r.code !== expectCode)
      throw new Error(`bench plugin: ${args.join(' ')} exited ${r.code}, expected ${expectCode}: ${r.out.slice(0, 400)}`);
    times.push(r.ms);
  }
  return times.sort((a, b) => a - b);
}

const NADS = [
  {
    name: 'macvlan-conf',
    config: { cniVersion: '0.3.1', type: 'macvlan', master: 'eth0', ipam: { type: 'host-local', subnet: '10.1.0.0/24' } },
  },
  { name: 'sriov-net', config: { cniVersion: '1.0.0', name: 'sriov-net', type: 'sriov', ipam: {} }, resourceName: 'intel.com/sriov_vf' },
];

const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web',
    namespace: 'default',
    annotations: {
      'k8s.v1.cni.cncf.io/networks': '[{"name":"macvlan-conf","ips":["10.1.0.7"]},{"name":"sriov-net","mac":"02:00:00:00:00:01"}]',
    },
  },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

export async function run(log: (line: string) => void): Promise<BenchResult[]> {
  const api = new FakeApiServer();
  await api.start();
  const dir = mkdtempSync(join(tmpdir(), 'netattach-bench-plugin-'));
  try {
    for (const n of NADS)
      api.add({
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinition',
        metadata: {
          name: n.name,
          namespace: 'default',
          ...(n.resourceName ? { annotations: { 'k8s.v1.cni.cncf.io/resourceName': n.resourceName } } : {}),
        },
        spec: { config: JSON.stringify(n.config) },
      });
    api.setList('/api/v1/namespaces', [{ metadata: { name: 'default' } }], '2');
    api.setList('/apis/netattach.io/v1alpha1/networkattachmentpolicies', [], '3');
    api.setList('/api/v1/pods', [POD], '4');
    const config = join(dir, 'config');
    writeFileSync(config, api.kubeconfig('bench-token'));
    const refused = join(dir, 'refused');
    writeFileSync(refused, api.kubeconfig('bench-token').replace(/http:\/\/127\.0\.0\.1:\d+/, 'http://127.0.0.1:1'));
    const env = { KUBECONFIG: config, HOME: dir };
    const floor = await series(['-e', '0'], {}, 0);
    const help = await series([MAIN, 'kubectl', '--help'], env, 0);
    const explain = await series([MAIN, 'kubectl', 'explain', 'pod', 'web', '-n', 'default'], env, 0);
    const down = await series([MAIN, 'kubectl', 'explain', 'pod', 'web', '-n', 'default'], { ...env, KUBECONFIG: refused }, 2);
    const f50 = percentile(floor, 50);
    const row = (what: string, times: number[], goalMs: number): BenchResult => {
      const p50 = percentile(times, 50);
      return {
        name: what,
        ms: Math.round(p50),
        p50Us: Math.round(p50 * 1000),
        p99Us: Math.round(percentile(times, 99) * 1000),
        target: `≤ ${goalMs} ms quiet`,
        met: p50 <= goalMs,
        notes: `${(p50 / f50).toFixed(1)}x the floor (${Math.round(f50)} ms)`,
      };
    };
    log(`${ROUNDS} runs each, spawned one after another; p50 of wall time to exit; the floor is node -e 0 in the same run`);
    return [
      { name: 'floor: node -e 0', ms: Math.round(f50), p50Us: Math.round(f50 * 1000), p99Us: Math.round(percentile(floor, 99) * 1000) },
      row('kubectl netattach --help', help, 150),
      row('kubectl netattach explain pod (local API server)', explain, 500),
      row('kubectl netattach explain pod (refused server)', down, 1500),
    ];
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
