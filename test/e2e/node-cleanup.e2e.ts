/**
 * cleanNode() (lib/node.ts) against the leftovers of a node killed mid-run, made by hand: a process
 * naming the node's directory, a tmpfs mounted in it (a pod volume), a network namespace holding a
 * pod address, the bridge with a veth, a changed hugepages count. As root; runs before node.e2e.ts.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BRIDGE, DEVICE_PLUGIN_DIR, NODE_WORK, cleanNode } from './lib/node.js';

const sh = (cmd: string, ...args: string[]): { code: number; out: string } => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { code: r.status ?? 1, out: `${r.stdout}${r.stderr}` };
};
const ok = (cmd: string, ...args: string[]): void => {
  const r = sh(cmd, ...args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.out}`);
};
const NETNS = 'na-e2e-cleanup-test';
const HUGEPAGES = '/proc/sys/vm/nr_hugepages';

t.test('cleanNode removes what a killed node left', async (t) => {
  t.equal(process.getuid?.(), 0, 'runs as root');
  const owner = path.join(NODE_WORK, 'owner.pid');
  if (existsSync(owner)) {
    const pid = Number(readFileSync(owner, 'utf8'));
    t.notOk(sh('kill', '-0', String(pid)).code === 0, `no node suite running (owner ${pid})`);
  }
  t.same(cleanNode(), [], 'a clean start');
  // whatever the test gets to, nothing of it stays
  t.teardown(() => {
    cleanNode();
    sh('ip', 'netns', 'delete', NETNS);
  });

  // the leftovers
  const vol = path.join(NODE_WORK, 'kubelet/pods/uid/volumes/kubernetes.io~downward-api/podnetinfo');
  mkdirSync(vol, { recursive: true });
  writeFileSync(owner, '999999999\n');
  ok('mount', '-t', 'tmpfs', 'tmpfs', vol);
  writeFileSync(path.join(vol, 'labels'), 'a="b"\n');
  const proc = spawn('tail', ['-f', path.join(vol, 'labels')], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  ok('ip', 'netns', 'add', NETNS);
  ok('ip', '-n', NETNS, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1');
  ok('ip', '-n', NETNS, 'addr', 'add', '10.244.7.99/24', 'dev', 'p0');
  ok('ip', 'link', 'add', BRIDGE, 'type', 'bridge');
  ok('ip', 'link', 'add', 'na-e2e-v0', 'type', 'veth', 'peer', 'name', 'na-e2e-v1');
  ok('ip', 'link', 'set', 'na-e2e-v0', 'master', BRIDGE);
  mkdirSync(DEVICE_PLUGIN_DIR, { recursive: true });
  for (const f of ['kubelet.sock', 'kubelet_internal_checkpoint', 'fake-intel.com_sriov_netdevice.sock'])
    writeFileSync(path.join(DEVICE_PLUGIN_DIR, f), '');
  writeFileSync(path.join(DEVICE_PLUGIN_DIR, 'other-plugin.sock'), '');
  t.teardown(() => void sh('rm', '-f', path.join(DEVICE_PLUGIN_DIR, 'other-plugin.sock')));
  const hugepages = readFileSync(HUGEPAGES, 'utf8').trim();
  writeFileSync(path.join(NODE_WORK, 'hugepages.prev'), hugepages);
  let changed = false;
  try {
    writeFileSync(HUGEPAGES, String(Number(hugepages) + 2));
    changed = readFileSync(HUGEPAGES, 'utf8').trim() !== hugepages;
  } catch {
    t.comment(`${HUGEPAGES} is not writable here: the restore is not exercised`);
  }

  const t0 = Date.now();
  t.same(cleanNode(), [], 'nothing left behind, by its own account');
  t.comment(`cleanNode took ${Date.now() - t0} ms`);
  await exited;
  t.pass('the process naming the node directory was killed');
  t.notOk(readFileSync('/proc/self/mountinfo', 'utf8').includes(NODE_WORK), 'no mount under the node directory');
  t.notOk(existsSync(NODE_WORK), 'the node directory is gone');
  t.notOk(sh('ip', 'netns', 'list').out.includes(NETNS), 'the namespace with a pod address is gone');
  t.not(sh('ip', 'link', 'show', BRIDGE).code, 0, 'the bridge is gone');
  t.not(sh('ip', 'link', 'show', 'na-e2e-v0').code, 0, 'its veth is gone');
  t.same(
    readdirSync(DEVICE_PLUGIN_DIR)
      .filter((f) => f !== 'other-plugin.sock')
      .sort(),
    [],
    "the device manager's and the plugin's files are gone",
  );
  t.ok(existsSync(path.join(DEVICE_PLUGIN_DIR, 'other-plugin.sock')), "another plugin's socket is kept");
  if (changed) t.equal(readFileSync(HUGEPAGES, 'utf8').trim(), hugepages, 'hugepages set back');
});

t.test('cleanNode leaves a namespace without a pod address alone', async (t) => {
  t.teardown(() => void sh('ip', 'netns', 'delete', `${NETNS}-other`));
  ok('ip', 'netns', 'add', `${NETNS}-other`);
  ok('ip', '-n', `${NETNS}-other`, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1');
  ok('ip', '-n', `${NETNS}-other`, 'addr', 'add', '10.245.7.99/24', 'dev', 'p0');
  t.same(cleanNode(), []);
  t.ok(sh('ip', 'netns', 'list').out.includes(`${NETNS}-other`), 'another namespace is kept');
});
