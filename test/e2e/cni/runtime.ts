/**
 * The oracle's shell: runs one pod's selections through the reference plugins in fresh network
 * namespaces and reads back what they did. A "host" netns holds the links the NADs name (eth1
 * for macvlan, hd0 for host-device; bridge creates its own bridge there), a "container" netns
 * plays the pod's. Each selection is ADDed in order through cni-invoke (Multus v4.3.0's
 * delegate call, test/e2e/infra/cni-invoke/main.go) run inside the host netns, as Multus runs
 * in the node's; the first failure stops the pod, as Multus's CmdAdd does. Then every interface
 * is read back with `ip -j`, everything is DELeted in reverse order, and both namespaces and the
 * scratch directory are removed whatever happened.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChainConfig } from './chains.js';
import type { Execution, ReadBack, Selection } from './model.js';

/** One invoker or `ip` call; past this it is killed (a hung plugin must not hang the suite). */
const CALL_TIMEOUT_MS = 30_000;

interface CallResult {
  code: number;
  stdout: string;
  stderr: string;
}

function call(cmd: string, args: string[], stdin = ''): Promise<CallResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), CALL_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout,
        stderr: signal ? `${stderr}killed by ${signal} after ${CALL_TIMEOUT_MS} ms` : stderr,
      });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

async function ip(...args: Array<string | { stdin: string }>): Promise<string> {
  const last = args[args.length - 1];
  const stdin = typeof last === 'object' ? last.stdin : '';
  const argv = args.filter((a): a is string => typeof a === 'string');
  const r = await call('ip', argv, stdin);
  if (r.code !== 0) throw new Error(`ip ${argv.join(' ')}: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout;
}

/** Why the oracle cannot run here, or undefined when it can (root, ip, netns, veth, macvlan). */
export async function unavailableReason(binDir: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, veth and macvlan links); CI runs as root';
  const probe = `orc-probe-${process.pid}`;
  try {
    await ip('netns', 'add', probe);
    await ip('-n', probe, 'link', 'add', 'eth1', 'type', 'veth', 'peer', 'name', 'eth1p');
    await ip('-n', probe, 'link', 'add', 'mv0', 'link', 'eth1', 'type', 'macvlan');
  } catch (err) {
    return `cannot create network namespaces with veth and macvlan links: ${(err as Error).message}`;
  } finally {
    await call('ip', ['netns', 'del', probe]);
  }
  const invoker = await call(path.join(binDir, 'cni-invoke'), []);
  if (!invoker.stdout.includes('bad request')) return `${binDir}/cni-invoke does not run: ${invoker.stderr || invoker.stdout}`;
  return undefined;
}

let serial = 0;

/** Runs one pod's selections (NAD configs by name) and returns what happened; never throws for a plugin's failure. */
export async function execute(
  binDir: string,
  configs: ReadonlyMap<string, ChainConfig>,
  selections: readonly Selection[],
): Promise<Execution> {
  const id = `${process.pid}-${++serial}`;
  const host = `orc-h-${id}`;
  const ctr = `orc-c-${id}`;
  const scratch = await mkdtemp(path.join(tmpdir(), 'netattach-cni-oracle-'));
  const request = (op: 'ADD' | 'DEL', sel: Selection, i: number) => ({
    op,
    binDir,
    cacheDir: path.join(scratch, 'cache'),
    netns: `/var/run/netns/${ctr}`,
    containerID: `orc-${id}`,
    podNamespace: 'default',
    podName: 'oracle',
    podUID: `00000000-0000-0000-0000-${String(serial).padStart(12, '0')}`,
    // Multus's delegate list starts with the cluster network (net0 is never a selection's).
    index: i + 1,
    nadName: sel.name,
    config: withScratch(configs.get(sel.name)!, scratch),
    selection: { ...sel, namespace: 'default' },
  });
  const invoke = (body: object) => call('ip', ['netns', 'exec', host, path.join(binDir, 'cni-invoke')], JSON.stringify(body));
  const added: number[] = [];
  const out: Execution = { added: true, interfaces: [], delErrors: [] };
  try {
    // Three `ip` processes set both namespaces up (spawning is most of a case's time).
    await ip('-b', '-', { stdin: `netns add ${host}\nnetns add ${ctr}\n` });
    // eth0 stands for the cluster network's interface (Multus's delegate 0), which a selection
    // cannot take.
    await ip('-n', host, '-b', '-', {
      stdin: [
        'link set lo up',
        'link add eth1 type veth peer name eth1p',
        'link add hd0 type veth peer name hd0p',
        `link add c0 type veth peer name eth0 netns ${ctr}`,
        ...['eth1', 'eth1p', 'hd0p', 'c0'].map((l) => `link set ${l} up`),
      ].join('\n'),
    });
    await ip('-n', ctr, '-b', '-', { stdin: 'link set lo up\nlink set eth0 up\n' });
    for (const [i, sel] of selections.entries()) {
      const r = await invoke(request('ADD', sel, i));
      const answer = parseAnswer(r);
      // Multus deletes a delegate whose ADD failed too (CmdAdd's delPlugins from idx down).
      added.push(i);
      if (!answer.ok) {
        out.added = false;
        out.failedAt = i;
        out.error = answer.error;
        break;
      }
      out.interfaces.push(await readBack(ctr, answer.ifName ?? ''));
    }
  } finally {
    for (const i of added.reverse()) {
      const r = await invoke(request('DEL', selections[i]!, i));
      const answer = parseAnswer(r);
      if (!answer.ok) out.delErrors.push(`${selections[i]!.name}: ${answer.error}`);
    }
    await call('ip', ['netns', 'del', ctr]);
    await call('ip', ['netns', 'del', host]);
    await rm(scratch, { recursive: true, force: true });
  }
  return out;
}

function parseAnswer(r: CallResult): { ok: boolean; ifName?: string; error?: string } {
  try {
    const a = JSON.parse(r.stdout) as { ok: boolean; ifName?: string; error?: string };
    if (a.ok === (r.code === 0)) return a;
  } catch {
    // fall through: the invoker died before answering
  }
  return { ok: false, error: `cni-invoke exit ${r.code}: ${(r.stdout + r.stderr).trim().slice(0, 500)}` };
}

/**
 * host-local keeps its leases in /var/lib/cni/networks unless told otherwise: each run gets its
 * own dataDir, the one change made to a NAD's config on its way to the plugin (netattach does
 * not read dataDir). A config stored as text goes as it is.
 */
function withScratch(config: ChainConfig, scratch: string): string {
  if (typeof config === 'string') return config;
  const copy = structuredClone(config) as { plugins?: Array<Record<string, unknown>> } & Record<string, unknown>;
  const plugins = copy.plugins ?? [copy];
  for (const p of plugins) {
    const ipam = p['ipam'] as Record<string, unknown> | undefined;
    if (ipam?.['type'] === 'host-local') ipam['dataDir'] = path.join(scratch, 'host-local');
  }
  return JSON.stringify(copy);
}

interface IpAddr {
  ifname: string;
  address?: string;
  addr_info?: Array<{ family: string; local: string; prefixlen: number; scope: string }>;
}
interface IpRoute {
  dst: string;
  table?: string;
  gateway?: string;
}

async function readBack(ns: string, ifName: string): Promise<ReadBack> {
  const [link] = JSON.parse(await ip('-n', ns, '-j', 'addr', 'show', 'dev', ifName)) as IpAddr[];
  const routes = (JSON.parse(await ip('-n', ns, '-j', 'route', 'show', 'table', 'all', 'dev', ifName)) as IpRoute[])
    .filter((r) => r.table !== 'local')
    .map((r) => (r.gateway ? `${r.dst} via ${r.gateway}` : r.dst));
  return {
    ifName,
    mac: link?.address ?? '',
    addresses: (link?.addr_info ?? []).filter((a) => a.scope === 'global').map((a) => `${a.local}/${a.prefixlen}`),
    routes,
  };
}
