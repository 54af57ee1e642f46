/**
 * A real node for the node suite (node.e2e.ts): containerd, the CNI bridge, a kubelet and the fake
 * device plugin, joined to a cluster of infra/cluster.ts (started with `scheduling: true` and
 * `--kubelet-preferred-address-types=InternalIP`, see NODE_APISERVER_FLAGS).
 *
 *   const node = await startNode(cluster, nodeParts(), log);
 *   ...
 *   await node.stop();
 *
 * Everything lives under one fixed directory (NODE_WORK): containerd's root, state and socket, the
 * kubelet's root dir (its pod volume mounts), the pod logs, the CNI configuration and IPAM state, the
 * device plugin's record. A fixed place because only one kubelet may run per host (the suite is the
 * only one) and because a run that was killed leaves mounts, processes and links behind that the
 * next run must find: cleanNode() removes them at start, at stop(), and on exit or a signal.
 * What it removes, all of it made by this harness:
 *  - processes whose command line names NODE_WORK (containerd, its shims, the kubelet, the device
 *    plugin) and the processes of the kubelet's cgroups (`kubepods` in every cgroup v1 hierarchy and
 *    in the unified one), then those cgroups;
 *  - mounts under NODE_WORK (pod volumes, container root filesystems, sandbox /dev/shm);
 *  - links in /var/log/containers to the pods' logs;
 *  - the device manager's socket and checkpoint and the plugin's sockets in DEVICE_PLUGIN_DIR;
 *  - network namespaces holding an address of POD_SUBNET, the bridge BRIDGE and its veths, libcni's
 *    cached results for CNI_NETWORK;
 *  - NODE_WORK itself, and the hugepages count is set back to what it was.
 * Must run as root (mounts, namespaces, cgroups).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onExitOrSignal, pidAlive, stopProcess, tail, type Cluster, type Proc } from '../infra/cluster.js';
import { freePort } from '../infra/ports.js';

export const NODE_NAME = 'netattach-node';
export const NODE_WORK = path.join(os.tmpdir(), 'netattach-node-e2e');
export const BRIDGE = 'na-e2e0';
export const NODE_IP = '10.244.7.1';
export const POD_SUBNET = '10.244.7.0/24';
export const CNI_NETWORK = 'netattach-e2e-pods';
export const PAUSE_IMAGE = 'netattach.local/pause:e2e';
export const NETPROBE_IMAGE = 'netattach.local/netprobe:e2e';
/** What the apiserver needs to reach the kubelet (logs) at the node IP. */
export const NODE_APISERVER_FLAGS = ['--kubelet-preferred-address-types=InternalIP'];
const OWNER_FILE = 'owner.pid';
/**
 * The kubelet's device manager ignores --root-dir: its socket and checkpoint are always here
 * (pluginapi.KubeletSocket, devicemanager.NewManagerImpl), hence one kubelet per host.
 */
export const DEVICE_PLUGIN_DIR = '/var/lib/kubelet/device-plugins';
/** The kubelet links each container's log here whatever podLogsDir says (kuberuntime legacyContainerLogsDir). */
const CONTAINER_LOG_LINKS = '/var/log/containers';
const HUGEPAGES_SYSCTL = '/proc/sys/vm/nr_hugepages';

export interface NodeParts {
  /** kubelet (and the control plane) from build-node.sh's `bin=` */
  binDir: string;
  /** fake-device-plugin and images/*.tar from build-node.sh's `parts=` */
  partsDir: string;
  /** the reference CNI plugins from build-node.sh's `cni=` */
  cniDir: string;
}

/** The dirs run.ts passes from build-node.sh ($NETATTACH_E2E_BIN_DIR, _NODE_PARTS, _NODE_CNI). */
export function nodeParts(): NodeParts {
  const binDir = process.env.NETATTACH_E2E_BIN_DIR;
  const partsDir = process.env.NETATTACH_E2E_NODE_PARTS;
  const cniDir = process.env.NETATTACH_E2E_NODE_CNI ?? '/usr/lib/cni';
  if (!binDir || !partsDir) {
    throw new Error(
      'the node suite needs NETATTACH_E2E_BIN_DIR and NETATTACH_E2E_NODE_PARTS: run it through `npm run test:e2e`, or set them from `bash test/e2e/infra/build-node.sh` (bin=, parts=)',
    );
  }
  for (const f of [path.join(binDir, 'kubelet'), path.join(partsDir, 'fake-device-plugin'), path.join(cniDir, 'bridge')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run bash test/e2e/infra/build-node.sh`);
  }
  return { binDir, partsDir, cniDir };
}

export interface NodeOptions {
  /** Devices the fake plugin advertises, resource -> count. */
  resources: Record<string, number>;
  /** 2 MiB hugepages to give the node (the kernel's count is restored at stop). 0: leave it. */
  hugepages2Mi?: number;
}

/** One line of the device plugin's record: one Allocate call for one container. */
export interface Allocation {
  resource: string;
  devices: string[];
  env: Record<string, string>;
  time: string | number;
}

/** One entry of the kubelet's device checkpoint: which devices a container of a pod holds. */
export interface CheckpointEntry {
  podUid: string;
  container: string;
  resource: string;
  devices: string[];
}

export interface RealNode {
  name: string;
  ip: string;
  workDir: string;
  /** Allocate calls the device plugin recorded, oldest first. */
  allocations(): Allocation[];
  /** The kubelet's device-manager checkpoint (kubelet_internal_checkpoint). */
  checkpoint(): CheckpointEntry[];
  /** 2 MiB hugepages the node was given (0 when the kernel refused). */
  hugepages2Mi: number;
  tails(lines?: number): string;
  stop(): Promise<void>;
}

// --------------------------------------------------------------------------- cleanup

function sh(cmd: string, args: string[]): { code: number; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { code: r.status ?? 1, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** Pids whose command line names `needle` (not this process). */
function pidsNaming(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(needle)) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The kubelet's pod cgroups: `kubepods` under each hierarchy, deepest first. */
function kubepodsCgroups(): string[] {
  const dirs: string[] = [];
  const walk = (d: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e);
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        /* gone */
      }
    }
    dirs.push(d);
  };
  let hierarchies: string[] = [];
  try {
    hierarchies = readdirSync('/sys/fs/cgroup').map((h) => path.join('/sys/fs/cgroup', h));
  } catch {
    /* no cgroups mounted */
  }
  for (const h of hierarchies) walk(path.join(h, 'kubepods'));
  return dirs;
}

const sleepSync = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function unescapeMount(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** Mount points at or under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => !!p)
    .map(unescapeMount)
    .filter((p) => p === dir || p.startsWith(dir + '/'));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

const NETNS_DIRS = ['/var/run/netns', '/run/netns'];
const subnetPrefix = NODE_IP.split('.').slice(0, 3).join('.') + '.';

/**
 * Removes every trace of a node of this harness (see the file comment). Synchronous, so that it
 * runs from an exit handler too. Returns what it could not remove (empty when all is clean).
 */
export function cleanNode(workDir = NODE_WORK): string[] {
  const left: string[] = [];
  // 1. processes: containerd, its shims, the kubelet, the device plugin; then the pods' processes
  for (let round = 0; round < 20; round++) {
    const pids = [...pidsNaming(workDir)];
    for (const cg of kubepodsCgroups()) {
      try {
        for (const l of readFileSync(path.join(cg, 'cgroup.procs'), 'utf8').split('\n')) if (l.trim()) pids.push(Number(l));
      } catch {
        /* gone */
      }
    }
    if (pids.length === 0) break;
    for (const pid of new Set(pids)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    sleepSync(100);
  }
  for (const pid of pidsNaming(workDir)) left.push(`process ${pid}`);
  for (const cg of kubepodsCgroups()) {
    for (let i = 0; i < 20; i++) {
      try {
        rmdirSync(cg);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') break;
        if (i === 19) left.push(`cgroup ${cg}: ${(e as Error).message}`);
        sleepSync(50);
      }
    }
  }
  // 2. mounts under the work dir (pod volumes, root filesystems, /dev/shm of sandboxes)
  if (existsSync(workDir)) {
    for (const m of mountsUnder(workDir)) sh('umount', ['-l', m]);
    for (const m of mountsUnder(workDir)) left.push(`mount ${m}`);
  }
  // 3. network: namespaces with a pod address, the bridge and its veths, libcni's cache
  for (const d of NETNS_DIRS) {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      const addrs = sh('ip', ['-n', n, '-o', '-4', 'addr', 'show']).out;
      if (addrs.includes(` ${subnetPrefix}`)) {
        const r = sh('ip', ['netns', 'delete', n]);
        if (r.code !== 0 && existsSync(path.join(d, n))) left.push(`netns ${n}: ${r.out.trim()}`);
      }
    }
  }
  for (const line of sh('ip', ['-o', 'link', 'show', 'master', BRIDGE]).out.split('\n')) {
    const m = /^\d+: ([^:@]+)[@:]/.exec(line);
    if (m) sh('ip', ['link', 'delete', m[1]!]);
  }
  if (sh('ip', ['link', 'show', BRIDGE]).code === 0) {
    const r = sh('ip', ['link', 'delete', BRIDGE]);
    if (r.code !== 0) left.push(`link ${BRIDGE}: ${r.out.trim()}`);
  }
  // the device manager's files (fixed path): its socket, checkpoint and the plugin's sockets
  try {
    for (const f of readdirSync(DEVICE_PLUGIN_DIR)) {
      if (f === 'kubelet.sock' || f === 'kubelet_internal_checkpoint' || /^fake-.*\.sock$/.test(f))
        rmSync(path.join(DEVICE_PLUGIN_DIR, f), { force: true });
    }
  } catch {
    /* never made */
  }
  // the kubelet's links to container logs (a fixed /var/log/containers) that point into the work dir
  try {
    for (const f of readdirSync(CONTAINER_LOG_LINKS)) {
      const link = path.join(CONTAINER_LOG_LINKS, f);
      try {
        if (readlinkSync(link).startsWith(workDir + '/')) rmSync(link, { force: true });
      } catch {
        /* not a link */
      }
    }
  } catch {
    /* never made */
  }
  for (const d of [DEVICE_PLUGIN_DIR, path.dirname(DEVICE_PLUGIN_DIR)]) {
    try {
      rmdirSync(d); // only when empty: another kubelet's files are not ours
    } catch {
      /* not empty, or gone */
    }
  }
  try {
    for (const f of readdirSync('/var/lib/cni/results'))
      if (f.startsWith(`${CNI_NETWORK}-`)) rmSync(path.join('/var/lib/cni/results', f), { force: true });
  } catch {
    /* no cache */
  }
  // 4. hugepages back to what they were
  try {
    const prev = readFileSync(path.join(workDir, 'hugepages.prev'), 'utf8').trim();
    writeFileSync(HUGEPAGES_SYSCTL, prev);
  } catch {
    /* not changed */
  }
  // 5. the work dir, only once nothing is mounted in it (rm would reach into a mount)
  if (existsSync(workDir) && mountsUnder(workDir).length === 0) {
    try {
      rmSync(workDir, { recursive: true, force: true, maxRetries: 3 });
    } catch (e) {
      left.push(`dir ${workDir}: ${(e as Error).message}`);
    }
  } else if (existsSync(workDir)) left.push(`dir ${workDir} (mounts remain)`);
  return left;
}

// --------------------------------------------------------------------------- processes

let hooks = false;
const liveNodes = new Set<string>();
function installHooks(): void {
  if (hooks) return;
  hooks = true;
  onExitOrSignal(() => {
    for (const w of liveNodes) cleanNode(w);
    liveNodes.clear();
  });
}

function startProc(name: string, cmd: string, args: string[], logPath: string, env?: NodeJS.ProcessEnv): Proc {
  const fd = openSync(logPath, 'a');
  // setpriv --pdeathsig: dies with the test process even on SIGKILL (shims do not: cleanNode)
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', cmd, ...args], { stdio: ['ignore', fd, fd], env: env ?? process.env });
  closeSync(fd);
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (c, sig) => resolve((code = c ?? (sig ? 128 : null))));
    child.on('error', () => resolve((code = 127)));
  });
  return { name, child, logPath, exited, exitCode: () => code };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  alive: () => string | undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = alive();
    if (dead) throw new Error(`${dead} while waiting for ${what}`);
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

function run(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', (e) => resolve({ code: 127, out: out + e.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

async function runOk(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.code}: ${r.out}`);
  return r.out;
}

// --------------------------------------------------------------------------- the node

function containerdConfig(w: string, cniDir: string): string {
  return `version = 2
root = "${w}/containerd/root"
state = "${w}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${w}/containerd/containerd.sock"

[ttrpc]
  address = "${w}/containerd/containerd.sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${w}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # root here lacks CAP_SYS_RESOURCE: runc cannot set a negative oom_score_adj (real-node.md)
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${cniDir}"
    conf_dir = "${w}/cni/net.d"
`;
}

function cniConfig(w: string): string {
  return JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          ipam: {
            type: 'host-local',
            dataDir: `${w}/cni/ipam`,
            ranges: [[{ subnet: POD_SUBNET, rangeStart: subnetPrefix + '10', rangeEnd: subnetPrefix + '250', gateway: NODE_IP }]],
          },
        },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(w: string, port: number): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: NODE_IP,
      port,
      readOnlyPort: 0,
      healthzPort: 0,
      // cgroup v1 without systemd here (real-node.md)
      cgroupDriver: 'cgroupfs',
      failCgroupV1: false,
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${w}/containerd/containerd.sock`,
      podLogsDir: `${w}/pod-logs`,
      // the apiserver reaches the kubelet anonymously (logs): a test node, no other client
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      // the images are imported, never pulled: no image garbage collection, no disk-pressure eviction
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
      maxPods: 30,
      nodeStatusUpdateFrequency: '2s',
      nodeStatusReportFrequency: '2s',
      syncFrequency: '5s',
      fileCheckFrequency: '5s',
      shutdownGracePeriod: '0s',
    },
    null,
    2,
  );
}

interface CheckpointFile {
  Data?: {
    PodDeviceEntries?: Array<{
      PodUID: string;
      ContainerName: string;
      ResourceName: string;
      DeviceIDs: Record<string, string[]> | string[];
    }>;
  };
}

/**
 * Starts the node and waits until it is Ready, untainted, and advertises every device of
 * `opts.resources` as allocatable. On any failure everything is cleaned before the error is thrown.
 */
export async function startNode(cluster: Cluster, parts: NodeParts, log: (m: string) => void, opts: NodeOptions): Promise<RealNode> {
  if (process.getuid?.() !== 0) throw new Error('the node suite runs a kubelet and containerd: it must run as root');
  const w = NODE_WORK;
  // a run in progress owns the node; a dead one's leftovers are removed
  try {
    const owner = Number.parseInt(readFileSync(path.join(w, OWNER_FILE), 'utf8'), 10);
    if (Number.isInteger(owner) && owner !== process.pid && pidAlive(owner))
      throw new Error(`another node suite (pid ${owner}) owns ${w}: one kubelet per host`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const stale = existsSync(w) || sh('ip', ['link', 'show', BRIDGE]).code === 0;
  const leftover = cleanNode(w);
  if (leftover.length) throw new Error(`could not clean an earlier node's leftovers:\n${leftover.join('\n')}`);
  if (stale) log(`removed an earlier run's node from ${w}`);
  installHooks();
  liveNodes.add(w);
  for (const d of ['logs', 'containerd', 'cni/net.d', 'cni/ipam', 'kubelet', 'pod-logs', DEVICE_PLUGIN_DIR])
    mkdirSync(path.resolve(w, d), { recursive: true });
  writeFileSync(path.join(w, OWNER_FILE), `${process.pid}\n`);
  const logs = path.join(w, 'logs');
  const procs: Proc[] = [];
  const tails = (lines = 40): string =>
    [...procs]
      .reverse()
      .map((p) => `--- ${p.name}: ${p.logPath} (last ${lines} lines)\n${tail(p.logPath, lines)}`)
      .join('\n');
  const dead = (): string | undefined => {
    const p = procs.find((q) => q.exitCode() !== undefined);
    return p ? `${p.name} exited with ${p.exitCode()}` : undefined;
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // pods first, while the kubelet can still tear down their sandboxes (CNI DEL, unmounts)
    await cluster.kubectl(['delete', 'pods', '--all-namespaces', '--all', '--grace-period=0', '--force', '--wait=false'], {
      timeoutMs: 20_000,
    });
    await until(
      'the node to have no pod sandboxes',
      async () => {
        const r = await run('ctr', ['-a', `${w}/containerd/containerd.sock`, '-n', 'k8s.io', 'tasks', 'ls', '-q']);
        return r.code !== 0 || r.out.trim() === '' ? true : undefined;
      },
      30_000,
      () => undefined,
    ).catch(() => log('pods still running at stop: killed'));
    for (const p of [...procs].reverse()) await stopProcess(p);
    const left = cleanNode(w);
    liveNodes.delete(w);
    if (left.length) throw new Error(`node cleanup left:\n${left.join('\n')}`);
  };

  try {
    const t0 = Date.now();
    // hugepages, where the kernel lets us: the kubelet reads the count at start
    let hugepages2Mi = 0;
    if (opts.hugepages2Mi) {
      const prev = readFileSync(HUGEPAGES_SYSCTL, 'utf8').trim();
      writeFileSync(path.join(w, 'hugepages.prev'), prev);
      try {
        writeFileSync(HUGEPAGES_SYSCTL, String(opts.hugepages2Mi));
      } catch (e) {
        log(`hugepages: cannot write ${HUGEPAGES_SYSCTL} (${(e as Error).message}): the node has none`);
      }
      hugepages2Mi = Number(readFileSync(HUGEPAGES_SYSCTL, 'utf8').trim());
    }

    // the bridge with the node's address, before the kubelet (its node IP) and the first pod
    await runOk('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
    await runOk('ip', ['addr', 'add', `${NODE_IP}/24`, 'dev', BRIDGE]);
    await runOk('ip', ['link', 'set', BRIDGE, 'up']);
    writeFileSync(path.join(w, 'cni/net.d/10-pods.conflist'), cniConfig(w));

    // containerd on its own socket, the images imported into the CRI namespace
    writeFileSync(path.join(w, 'containerd/config.toml'), containerdConfig(w, parts.cniDir));
    const sock = `${w}/containerd/containerd.sock`;
    procs.push(startProc('containerd', 'containerd', ['--config', `${w}/containerd/config.toml`], path.join(logs, 'containerd.log')));
    await until('containerd', async () => ((await run('ctr', ['-a', sock, 'version'])).code === 0 ? true : undefined), 60_000, dead);
    for (const image of ['pause', 'netprobe'])
      await runOk('ctr', ['-a', sock, '-n', 'k8s.io', 'images', 'import', path.join(parts.partsDir, 'images', `${image}.tar`)]);
    const images = await runOk('ctr', ['-a', sock, '-n', 'k8s.io', 'images', 'ls', '-q']);
    for (const i of [PAUSE_IMAGE, NETPROBE_IMAGE]) {
      if (!images.split('\n').some((l) => l.trim() === i || l.trim() === `docker.io/${i}`))
        throw new Error(`image ${i} not among the imported ones:\n${images}`);
    }
    log(`containerd up, images imported after ${Date.now() - t0} ms`);

    // the kubelet, as admin (the cluster's token kubeconfig), registering NODE_NAME at NODE_IP
    const port = await freePort();
    writeFileSync(path.join(w, 'kubelet.json'), kubeletConfig(w, port));
    procs.push(
      startProc(
        'kubelet',
        path.join(parts.binDir, 'kubelet'),
        [
          `--config=${w}/kubelet.json`,
          `--kubeconfig=${cluster.kubeconfigPath}`,
          `--root-dir=${w}/kubelet`,
          `--cert-dir=${w}/kubelet/pki`,
          `--hostname-override=${NODE_NAME}`,
          `--node-ip=${NODE_IP}`,
          '--v=2',
        ],
        path.join(logs, 'kubelet.log'),
      ),
    );
    const kubeletSock = path.join(DEVICE_PLUGIN_DIR, 'kubelet.sock');
    await until("the kubelet's device-plugin socket", () => (existsSync(kubeletSock) ? true : undefined), 120_000, dead);

    // the fake device plugin
    const record = path.join(w, 'allocations.jsonl');
    writeFileSync(record, '');
    procs.push(
      startProc(
        'fake-device-plugin',
        path.join(parts.partsDir, 'fake-device-plugin'),
        [
          ...Object.entries(opts.resources).flatMap(([r, n]) => ['--resource', `${r}=${n}`]),
          '--record',
          record,
          '--kubelet-socket',
          kubeletSock,
          '--plugin-dir',
          DEVICE_PLUGIN_DIR,
          '--device-dir',
          `${w}/devices`,
        ],
        path.join(logs, 'fake-device-plugin.log'),
      ),
    );

    // Ready, then the not-ready taint lifted (no node-lifecycle controller runs), then the devices
    type NodeJson = {
      spec?: { taints?: Array<{ key: string }> };
      status?: { conditions?: Array<{ type: string; status: string }>; allocatable?: Record<string, string> };
    };
    const getNode = async (): Promise<NodeJson | undefined> => {
      const r = await cluster.kubectl(['get', 'node', NODE_NAME, '-o', 'json']);
      return r.code === 0 ? (JSON.parse(r.stdout) as NodeJson) : undefined;
    };
    await until(
      `node ${NODE_NAME} Ready`,
      async () => {
        const n = await getNode();
        return n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
      },
      120_000,
      dead,
    );
    log(`node Ready after ${Date.now() - t0} ms`);
    const taint = await cluster.kubectl(['taint', 'node', NODE_NAME, 'node.kubernetes.io/not-ready:NoSchedule-']);
    if (taint.code !== 0 && !/not found/.test(taint.stderr)) throw new Error(`removing the not-ready taint: ${taint.stderr}`);
    await until(
      `node ${NODE_NAME} advertising ${JSON.stringify(opts.resources)}`,
      async () => {
        const n = await getNode();
        const a = n?.status?.allocatable ?? {};
        const taints = (n?.spec?.taints ?? []).map((t) => t.key);
        return Object.entries(opts.resources).every(([r, c]) => a[r] === String(c)) && !taints.includes('node.kubernetes.io/not-ready')
          ? true
          : undefined;
      },
      120_000,
      dead,
    );
    log(`node advertises its devices after ${Date.now() - t0} ms`);

    return {
      name: NODE_NAME,
      ip: NODE_IP,
      workDir: w,
      hugepages2Mi,
      allocations: () =>
        readFileSync(record, 'utf8')
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as Allocation),
      checkpoint: () => {
        const f = path.join(DEVICE_PLUGIN_DIR, 'kubelet_internal_checkpoint');
        if (!existsSync(f)) return [];
        const cp = JSON.parse(readFileSync(f, 'utf8')) as CheckpointFile;
        return (cp.Data?.PodDeviceEntries ?? []).map((e) => ({
          podUid: e.PodUID,
          container: e.ContainerName,
          resource: e.ResourceName,
          devices: Array.isArray(e.DeviceIDs) ? e.DeviceIDs : Object.values(e.DeviceIDs).flat(),
        }));
      },
      tails,
      stop,
    };
  } catch (e) {
    const t = tails(40);
    await stop().catch((err: Error) => log(err.message));
    throw new Error(`${(e as Error).message}\n${t}`);
  }
}
