// Interleaved A/B of servers under saturation: the bare fastify floor (bench/floor-server.ts) and one or
// more netattach builds, each server pinned to CPU 0 and the load to CPU 1, every round loading each
// server in turn (order alternating), so a loaded machine slows all of them alike and the ratios hold.
// CPU per review is read from /proc; medians and per-round ratios to the floor are printed.
// usage (after `npm run build` in each tree):
//   node bench/interleaved.mjs ROUNDS SECONDS main=A/dist/src/cli/main.js new=B/dist/src/cli/main.js floor=A/dist/bench/floor-server.js
//   FLAGS='--max-old-space-size=192 --max-semi-space-size=4' ...  (Node flags of every server)
//   EXTRA='--cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval 100' ...  (netattach servers only: profiles)
// A label may carry its own flags: new=B/dist/src/cli/main.js=--max-semi-space-size=4,--max-old-space-size=192
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
const [rounds, seconds, ...targets] = process.argv.slice(2);
const GFLAGS = (process.env.FLAGS ?? '--max-old-space-size=192 --max-semi-space-size=1').split(' ').filter(Boolean);
const EXTRA = (process.env.EXTRA ?? '').split(' ').filter(Boolean);
const NS = 'bench';
const work = mkdtempSync(join(tmpdir(), 'netattach-interleaved-'));
const TLS = join(work, 'tls');
const NADS = join(work, 'nads');
mkdirSync(TLS);
mkdirSync(NADS);
const nad = (n, r, caps) => JSON.stringify({ apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: n, namespace: NS, annotations: { 'k8s.v1.cni.cncf.io/resourceName': r } }, spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: n, plugins: [{ type: 'sriov', capabilities: Object.fromEntries(caps.map((c) => [c, true])), ipam: { type: 'static' } }] }) } });
writeFileSync(join(NADS, 'a.json'), nad('sriov-a', 'intel.com/sriov_a', ['ips', 'mac']));
writeFileSync(join(NADS, 'b.json'), nad('sriov-b', 'intel.com/sriov_b', ['ips', 'mac']));
writeFileSync(join(NADS, 'c.json'), nad('rdma-c', 'rdma/hca_shared_c', ['ips']));
const NETWORKS = JSON.stringify([{ name: 'sriov-a', interface: 'net1', mac: '02:23:45:67:89:01', ips: ['10.10.0.5/24'] },{ name: 'sriov-b', interface: 'net2', ips: ['fd00:10::5/64'] },{ name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] }]);
function reviewOfSize(targetBytes) {
  const containers = [];
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'app-7d9f8c6b5-', namespace: NS, labels: { app: 'app', 'pod-template-hash': '7d9f8c6b5' }, annotations: { 'k8s.v1.cni.cncf.io/networks': NETWORKS } }, spec: { containers, restartPolicy: 'Always' } };
  do { const i = containers.length; const env = Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${i}_${j}`, value: `value-${i}-${j}-${'x'.repeat(20)}` })); containers.push({ name: `c${i}`, image: `registry.example.com/app/c${i}:1.2.3`, env, resources: { requests: { cpu: '100m', memory: '128Mi' } } }); } while (JSON.stringify(pod).length < targetBytes);
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: NS, operation: 'CREATE', userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' }, object: pod, oldObject: null, dryRun: false } });
}
const body = reviewOfSize(4096);
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const rss = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
// Servers started so far: stopped when this script ends, also when it fails half-way (a server
// that did not start, a load that threw), so no server is left holding a CPU.
const children = [];
process.on('exit', () => { for (const c of children) c.kill('SIGTERM'); });
async function start(label, script, flags) {
  const FLAGS = flags ? flags.split(',') : GFLAGS;
  const floor = script.includes('floor-server');
  const args = floor ? [...FLAGS, script, TLS] : [...FLAGS, ...EXTRA, script, 'serve', '--tls-dir', TLS, '--nads', NADS, '--host', '127.0.0.1', '--port', '0', '--health-port', '0'];
  const child = spawn('taskset', ['-c', '0', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MALLOC_ARENA_MAX: '2' } });
  children.push(child);
  let out = '';
  const url = await new Promise((res, rej) => { child.stdout.on('data', (c) => { out += c; const m = /"url":"(https:\/\/[^"]+)"/.exec(out); if (m && (floor || /netattach serving/.test(out))) res(m[1]); }); child.stderr.on('data', (c) => (out += c)); child.on('exit', (c) => rej(new Error(label + ' exited ' + c + out))); });
  await new Promise((r) => setTimeout(r, 1500));
  return { label, child, url: url + '/mutate?timeout=10s', cpuUs: [], rps: [], n: 0 };
}
const load = (url, s) => autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 32, duration: s });
const ts = [];
// The pair comes from `netattach certs` in a process of its own, as a Deployment mounts it: no server
// under test loads the certificate generator.
const maker = targets.map((t) => t.split('=')[1]).find((s) => !s.includes('floor-server'));
if (!maker) throw new Error('give at least one netattach target: it makes the certificate');
const made = spawnSync(process.execPath, [maker, 'certs', '--out', TLS, '--san', '127.0.0.1'], { stdio: 'ignore' });
if (made.status !== 0 || !existsSync(join(TLS, 'tls.crt'))) throw new Error('netattach certs failed');
for (const t of targets) {
  const [label, script, ...fl] = t.split('=');
  ts.push(await start(label, script, fl.join('=')));
}
for (const t of ts) await load(t.url, 2);
for (let r = 0; r < Number(rounds); r++) {
  const order = r % 2 ? [...ts].reverse() : ts;
  for (const t of order) {
    const c0 = cpu(t.child.pid); const s = await load(t.url, Number(seconds)); const c1 = cpu(t.child.pid);
    if (s.non2xx || s.errors) console.log(t.label, 'ERRORS', s.non2xx, s.errors);
    t.cpuUs.push(((c1 - c0) / s['2xx']) * 1e6); t.rps.push(s['2xx'] / s.duration);
  }
  console.log(`round ${r}: ` + ts.map((t) => `${t.label} ${t.cpuUs.at(-1).toFixed(0)}µs ${t.rps.at(-1).toFixed(0)}/s`).join(' | '));
}
const med = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
const floor = ts.find((t) => t.label === 'floor');
for (const t of ts) console.log(`${t.label}: median CPU ${med(t.cpuUs).toFixed(1)} µs/review, ${med(t.rps).toFixed(0)}/s, RSS ${rss(t.child.pid).toFixed(0)} MB` + (floor ? `, CPU/floor ${(med(t.cpuUs) / med(floor.cpuUs)).toFixed(2)}x (per-round ratio median ${med(t.cpuUs.map((v, i) => v / floor.cpuUs[i])).toFixed(2)}x), RSS/floor ${(rss(t.child.pid) / rss(floor.child.pid)).toFixed(2)}x` : ''));
for (const t of ts) t.child.kill('SIGTERM');
rmSync(work, { recursive: true, force: true });
