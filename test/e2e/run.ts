/**
 * `npm run test:e2e`: builds what the suite needs, then runs it with tap.
 *
 * One Kubernetes version serves every suite (DEFAULT_K8S_VERSION, v1.37.2; NETATTACH_K8S_VERSION):
 * a cold machine builds it once, adding the scheduler, controller manager and kubelet for the later
 * suites to the same cache directory.
 *
 * 1. kube-apiserver, kubectl, etcd (infra/build.sh: built once from the Go module proxy, cached),
 *    network-resources-injector, the oracle of nri-oracle.e2e.ts (infra/build-nri.sh, likewise),
 *    helm for helm.e2e.ts (infra/build-helm.sh, likewise), and the reference CNI plugins with
 *    cni-invoke, the oracle of cni-oracle.e2e.ts (infra/build-cni.sh)
 * 2. netattach itself (`npm run build`: the suite runs dist/src/cli/main.js as a real process)
 * 3. tap, one file at a time: the unit checks of the harness, then the suite (one cluster)
 * 4. the DRA suite (dra.e2e.ts) and the scheduler suite (scheduler.e2e.ts) with kube-scheduler and
 *    kube-controller-manager too (NETATTACH_E2E_DRA_VERSION: another version for these two)
 * 5. the node suite (node.e2e.ts) on the same version with the kubelet, containerd, runc, the
 *    reference CNI plugins, the fake device plugin and the local images (infra/build-node.sh)
 *
 * Exits with tap's exit code. Extra arguments go to tap (e.g. `npm run test:e2e -- --bail`).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_K8S_VERSION } from './infra/cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function step(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      process.stdout.write(d);
    });
    child.on('error', (err) => {
      process.stderr.write(`[e2e] cannot run ${cmd}: ${err.message}\n`);
      resolve({ code: 127, stdout });
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout }));
  });
}

async function main(): Promise<number> {
  let t0 = Date.now();
  process.stderr.write('[e2e] binaries: bash test/e2e/infra/build.sh (first run: several minutes)\n');
  const build = await step('bash', [path.join(root, 'test/e2e/infra/build.sh')]);
  if (build.code !== 0) {
    process.stderr.write('[e2e] could not build kube-apiserver/kubectl/etcd (needs Go and the Go module proxy); see above\n');
    return build.code;
  }
  const binDir = build.stdout.trim().split('\n').pop()!;
  process.stderr.write(`[e2e] binaries ready in ${Date.now() - t0} ms: ${binDir}\n`);

  t0 = Date.now();
  const nri = await step('bash', [path.join(root, 'test/e2e/infra/build-nri.sh')]);
  if (nri.code !== 0) {
    process.stderr.write('[e2e] could not build network-resources-injector (needs Go and the Go module proxy); see above\n');
    return nri.code;
  }
  const nriBin = nri.stdout.trim().split('\n').pop()!;
  process.stderr.write(`[e2e] network-resources-injector ready in ${Date.now() - t0} ms: ${nriBin}\n`);

  t0 = Date.now();
  const helm = await step('bash', [path.join(root, 'test/e2e/infra/build-helm.sh')]);
  if (helm.code !== 0) {
    process.stderr.write('[e2e] could not build helm (needs Go and the Go module proxy); see above\n');
    return helm.code;
  }
  const helmBin = helm.stdout.trim().split('\n').pop()!;
  process.stderr.write(`[e2e] helm ready in ${Date.now() - t0} ms: ${helmBin}\n`);

  t0 = Date.now();
  const cni = await step('bash', [path.join(root, 'test/e2e/infra/build-cni.sh')]);
  if (cni.code !== 0) {
    process.stderr.write('[e2e] could not build the reference CNI plugins (needs Go and the Go module proxy); see above\n');
    return cni.code;
  }
  const cniBin = cni.stdout.trim().split('\n').pop()!;
  process.stderr.write(`[e2e] CNI plugins and cni-invoke ready in ${Date.now() - t0} ms: ${cniBin}\n`);

  t0 = Date.now();
  const tsc = await step('npm', ['run', '--silent', 'build']);
  if (tsc.code !== 0) {
    process.stderr.write('[e2e] npm run build failed; see above\n');
    return tsc.code;
  }
  process.stderr.write(`[e2e] netattach built in ${Date.now() - t0} ms\n`);

  const main = await tap(
    binDir,
    [
      'test/e2e/infra/webhook.unit.ts',
      'test/e2e/infra/ports.unit.ts',
      'test/e2e/netattach.e2e.ts',
      'test/e2e/replicas.e2e.ts',
      'test/e2e/hostile-store.e2e.ts',
      'test/e2e/upgrade.e2e.ts',
      'test/e2e/nri-oracle.e2e.ts',
      'test/e2e/audit.e2e.ts',
      'test/e2e/client-auth.e2e.ts',
      'test/e2e/warnings.e2e.ts',
      'test/e2e/helm.e2e.ts',
      'test/e2e/cni/model.unit.ts',
      'test/e2e/cni-oracle.e2e.ts',
      'test/e2e/kubectl-plugin.e2e.ts',
      'test/e2e/kubevirt.e2e.ts',
    ],
    { NETATTACH_E2E_NRI_BIN: nriBin, NETATTACH_E2E_HELM_BIN: helmBin, NETATTACH_E2E_CNI_BIN: cniBin },
  );

  t0 = Date.now();
  const draVersion = process.env.NETATTACH_E2E_DRA_VERSION || process.env.NETATTACH_K8S_VERSION || DEFAULT_K8S_VERSION;
  process.stderr.write(
    `[e2e] DRA suite: Kubernetes ${draVersion} with kube-scheduler and kube-controller-manager (first run: many minutes)\n`,
  );
  const draBuild = await step('bash', [path.join(root, 'test/e2e/infra/build.sh')], {
    ...process.env,
    NETATTACH_K8S_VERSION: draVersion,
    NETATTACH_E2E_SCHEDULING: '1',
  });
  if (draBuild.code !== 0) {
    process.stderr.write(`[e2e] could not build Kubernetes ${draVersion} for the DRA suite; see above\n`);
    return main || draBuild.code;
  }
  const draBin = draBuild.stdout.trim().split('\n').pop()!;
  process.stderr.write(`[e2e] DRA binaries ready in ${Date.now() - t0} ms: ${draBin}\n`);
  const dra = await tap(draBin, ['test/e2e/dra.e2e.ts', 'test/e2e/scheduler.e2e.ts'], { NETATTACH_E2E_NRI_BIN: nriBin });

  t0 = Date.now();
  process.stderr.write(`[e2e] node suite: kubelet ${draVersion}, containerd, the fake device plugin (bash test/e2e/infra/build-node.sh)\n`);
  const nodeBuild = await step('bash', [path.join(root, 'test/e2e/infra/build-node.sh')], {
    ...process.env,
    NETATTACH_K8S_VERSION: draVersion,
  });
  const dirs = Object.fromEntries(
    nodeBuild.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  if (nodeBuild.code !== 0 || !dirs.bin || !dirs.parts || !dirs.cni) {
    process.stderr.write('[e2e] could not build or install the node (kubelet, containerd, device plugin); see above\n');
    return main || dra || nodeBuild.code || 1;
  }
  process.stderr.write(`[e2e] node parts ready in ${Date.now() - t0} ms: ${dirs.bin}, ${dirs.parts}, ${dirs.cni}\n`);
  const node = await tap(
    dirs.bin,
    ['test/e2e/infra/node/parts.unit.ts', 'test/e2e/node/nri-corpus.unit.ts', 'test/e2e/node-cleanup.e2e.ts', 'test/e2e/node.e2e.ts'],
    { NETATTACH_E2E_NODE_PARTS: dirs.parts, NETATTACH_E2E_NODE_CNI: dirs.cni, NETATTACH_E2E_NRI_BIN: nriBin },
  );
  return main || dra || node;
}

function tap(binDir: string, files: string[], extraEnv: Record<string, string> = {}): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(
      'npx',
      ['tap', '--jobs=1', '--disable-coverage', '--allow-incomplete-coverage', '--timeout=1500', ...process.argv.slice(2), ...files],
      { cwd: root, stdio: 'inherit', env: { ...process.env, NETATTACH_E2E_BIN_DIR: binDir, ...extraEnv } },
    );
    const forward = (sig: NodeJS.Signals): void => void child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', () => resolve(127));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

process.exitCode = await main();
