/**
 * End-to-end: what a developer reads in `kubectl` when netattach warns (issue 27). Each kind of
 * warning netattach sends is provoked through a real kube-apiserver, and the test reads kubectl's
 * stderr: the line must be there, within the apiserver's 256-rune cut, and carry the reason
 * whole (or, for a reason longer than the budget, its point: the start). The reasons are built
 * from the objects the test sends (the policy, the user, the NAD, the holder pod), not copied
 * from a run.
 */
import t, { type Test } from 'tap';
import { startE2e, type E2e } from './lib/env.js';
import { cronJob, nad, namespace, pod, policy } from './lib/objects.js';
import { MAX_WARNING_LENGTH, MAX_WARNING_LONG } from '../../src/admission/index.js';

type Obj = Record<string, unknown>;

const NS = 'e2e-warnings';
const POLICY = 'e2e-warn-only';
const MAC = '02:00:00:27:00:01';
const ANNOTATION = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
let e: E2e;
let user = '';

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  const whoami = JSON.parse(await e.cluster.kubectlOk(['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: { username: string } } };
  user = whoami.status.userInfo.username;
  await e.applyOk([
    namespace(NS, { 'e2e.netattach.io/warnings': 'yes' }),
    // sets the MAC itself
    nad({
      namespace: NS,
      name: 'bridge',
      config: {
        cniVersion: '1.0.0',
        name: 'bridge',
        type: 'bridge',
        bridge: 'br-e2e',
        ipam: { type: 'host-local', subnet: '10.27.0.0/24' },
      },
    }),
    // a plugin netattach does not know
    nad({ namespace: NS, name: 'acme', config: { cniVersion: '1.0.0', name: 'acme', type: 'acme-cni' } }),
    // whereabouts hands out a requested address without reserving it
    nad({
      namespace: NS,
      name: 'pool',
      config: { cniVersion: '0.3.1', name: 'pool', type: 'macvlan', master: 'eth1', ipam: { type: 'whereabouts', range: '10.28.0.0/24' } },
    }),
  ]);
  await e.applyOk(
    policy(POLICY, {
      namespaceSelector: { matchLabels: { 'e2e.netattach.io/warnings': 'yes' } },
      action: 'Warn',
      rules: {
        requestedFields: { forbidden: ['mac'] },
        uniqueAddresses: { mac: 'Cluster' },
        capabilities: { action: 'Warn' },
      },
    }),
  );
  // The policy is live once a dry run warns about a MAC.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await e.apply(pod(NS, 'probe', [{ name: 'bridge', mac: '02:00:00:27:ff:ff' }]), ['--dry-run=server']);
    if (r.stderr.includes(`policy "${POLICY}"`)) break;
    if (Date.now() > deadline) throw new Error(`the policy never applied: ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 500));
  }
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
});

/** kubectl's `Warning: ...` lines, without the prefix. */
const warningsOf = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('Warning: '))
    .map((l) => l.slice('Warning: '.length));

/**
 * Applies `obj`, expects success, and finds the warning at `path` that carries `reason` (a whole
 * reason, the point a longer one starts with, or the parts of one that names live state).
 */
async function expectWarning(t: Test, obj: Obj, path: string, reason: string | string[]): Promise<string> {
  const parts = typeof reason === 'string' ? [reason] : reason;
  const r = await e.apply(obj);
  t.equal(r.code, 0, `admitted: ${r.stderr.trim()}`);
  const lines = warningsOf(r.stderr);
  for (const l of lines) t.ok([...l].length <= MAX_WARNING_LONG, `within ${MAX_WARNING_LONG} runes: ${l.length}`);
  const line = lines.find((l) => l.startsWith(`${path}: `) && parts.every((p) => l.includes(p)));
  t.ok(line, `kubectl prints a warning at ${path} with ${JSON.stringify(parts)}; it printed:\n${lines.join('\n')}`);
  return line ?? '';
}

t.test('a Warn policy forbidding a field: the rule, the user and the field', async (t) => {
  const line = await expectWarning(
    t,
    pod(NS, 'mac-a', [{ name: 'bridge', mac: MAC }]),
    `${ANNOTATION}[0].mac`,
    `policy "${POLICY}" (requestedFields): user "${user}" may not set mac`,
  );
  // Before issue 27 this was cut to 120 characters, after the user's name.
  t.ok(line.length > MAX_WARNING_LENGTH || line.endsWith('may not set mac'), line);
});

t.test('a Warn uniqueness: the address, its holder and the scope', async (t) => {
  await expectWarning(t, pod(NS, 'mac-b', [{ name: 'bridge', mac: MAC }]), `${ANNOTATION}[0].mac`, [
    `policy "${POLICY}" (uniqueAddresses): MAC ${MAC} is already used by pod ${NS}/mac-a`,
    '(scope Cluster)',
  ]);
});

t.test('a capability no plugin of the chain reads, re-graded to Warn', async (t) => {
  await expectWarning(
    t,
    pod(NS, 'guid-on-bridge', [{ name: 'bridge', 'infiniband-guid': '00:00:00:00:00:00:27:01' }]),
    `${ANNOTATION}[0].infiniband-guid`,
    `${NS}/bridge would ignore it: no plugin of its chain (bridge) reads runtimeConfig "infinibandGUID"`,
  );
});

t.test('a plugin netattach does not know: the plugin and the flag that teaches it', async (t) => {
  await expectWarning(
    t,
    pod(NS, 'acme', [{ name: 'acme', mac: '02:00:00:27:00:02' }]),
    `${ANNOTATION}[0].mac`,
    'may be ignored: netattach does not know plugin "acme-cni"; if it reads it: --plugin-reads acme-cni=mac',
  );
});

t.test('an IPAM that does not reserve a requested address: who and what may happen', async (t) => {
  await expectWarning(
    t,
    pod(NS, 'pool', [{ name: 'pool', ips: ['10.28.0.7/24'] }]),
    `${ANNOTATION}[0].ips`,
    'hands out a requested address without reserving it in its pool: another pod may be given the same address',
  );
});

t.test("a workload template's long path keeps the reason whole", async (t) => {
  const path = `spec.jobTemplate.spec.template.${ANNOTATION}[0].mac`;
  const line = await expectWarning(
    t,
    cronJob(NS, 'nightly', [{ name: 'bridge', mac: '02:00:00:27:00:03' }]),
    path,
    `policy "${POLICY}" (requestedFields): user "${user}" may not set mac`,
  );
  t.ok(line.length > MAX_WARNING_LENGTH, `longer than a line (${line.length}), sent whole rather than cut`);
});
