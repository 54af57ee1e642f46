// manifests/overlays/self-signed/publish-certs.sh against a fake kubectl that keeps Secrets and
// the webhook configurations (from the base) in a JSON file: first install, renewal with the
// same CA, a CA replaced while the old one is still trusted. The same script ran against a real
// kube-apiserver and kubectl while it was written; this keeps its logic from regressing.
// Heavy: the script runs 6 times and its fake kubectl is a Node.js process per call (66 of them),
// about 10 s of CPU on the quiet 2-core machine, the most of any file in the unit tier.
import t from 'tap';
import { mkdtempSync, writeFileSync, readFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { run as certs } from '../../../src/cli/certs.js';
import { ROOT, BASE, SELF_SIGNED, kustomizeObjects, find, type Obj } from '../../manifests/load.js';

// The parts of a tap test the helpers use (the root and subtests both have them).
type Checks = Pick<typeof t, 'teardown' | 'equal'>;

const SCRIPT = join(SELF_SIGNED, 'publish-certs.sh');
const FAKE = join(ROOT, 'test', 'manifests', 'fixtures', 'fake-kubectl.mjs');

interface State {
  calls: string[];
  secrets: Record<string, Obj>;
  webhooks: Record<string, Obj>;
}
type StoredState = Omit<State, 'calls'>;

function cluster(t: Checks): {
  state: () => State;
  sh: (...args: string[]) => { code: number | null; out: string };
  makeCerts: (dir: string) => Promise<void>;
  tmp: () => string;
} {
  const root = mkdtempSync(join(tmpdir(), 'netattach-publish-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const bin = join(root, 'bin');
  spawnSync('mkdir', ['-p', bin]);
  writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\nexec env -u NODE_OPTIONS -u NODE_V8_COVERAGE "${process.execPath}" "${FAKE}" "$@"\n`);
  chmodSync(join(bin, 'kubectl'), 0o755);
  const statePath = join(root, 'state.json');
  const base = kustomizeObjects(BASE);
  writeFileSync(`${statePath}.calls`, '');
  writeFileSync(
    statePath,
    JSON.stringify({
      secrets: {},
      webhooks: {
        mutatingwebhookconfiguration: find(base, 'MutatingWebhookConfiguration', 'netattach'),
        validatingwebhookconfiguration: find(base, 'ValidatingWebhookConfiguration', 'netattach'),
      },
    }),
  );
  let n = 0;
  return {
    state: () => ({
      ...(JSON.parse(readFileSync(statePath, 'utf8')) as StoredState),
      calls: readFileSync(`${statePath}.calls`, 'utf8').split('\n').filter(Boolean),
    }),
    sh: (...args) => {
      const r = spawnSync('bash', [SCRIPT, ...args], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_KUBECTL_STATE: statePath },
      });
      return { code: r.status, out: r.stdout + r.stderr };
    },
    makeCerts: async (dir) => {
      const io = { stdout: () => {}, stderr: () => {}, stdin: process.stdin, env: {}, cwd: dir };
      t.equal(await certs(['--out', dir, '--force'], io), 0, 'netattach certs');
    },
    tmp: () => {
      const d = join(root, `run${n++}`);
      spawnSync('mkdir', ['-p', d]);
      return d;
    },
  };
}

/** What the job's three containers do, in order, in a fresh emptyDir. */
async function jobRun(t: Checks, c: ReturnType<typeof cluster>): Promise<string> {
  const dir = c.tmp();
  const fetched = c.sh('fetch-ca', dir);
  t.equal(fetched.code, 0, `fetch-ca: ${fetched.out}`);
  await c.makeCerts(dir);
  const published = c.sh('publish', dir);
  t.equal(published.code, 0, `publish: ${published.out}`);
  return fetched.out;
}

const bundles = (s: State): string[] =>
  Object.values(s.webhooks).flatMap((w) => (w.webhooks as Obj[]).map((x) => x.clientConfig.caBundle as string));
const pems = (b64: string): string[] =>
  Buffer.from(b64, 'base64')
    .toString()
    .match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
const secret = (s: State, name: string): Obj => s.secrets[`netattach-system/${name}`] ?? {};

t.test('first install: a new CA, both Secrets, and the CA in every webhook', async (t) => {
  const c = cluster(t);
  t.match(await jobRun(t, c), /no CA in secret\/netattach-ca/);
  const s = c.state();
  const ca = secret(s, 'netattach-ca');
  const tls = secret(s, 'netattach-tls');
  t.equal(ca.type, 'Opaque');
  t.same(Object.keys(ca.data).sort(), ['ca.crt', 'ca.key']);
  t.equal(tls.type, 'kubernetes.io/tls');
  t.same(Object.keys(tls.data).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
  t.equal(tls.data['ca.crt'], ca.data['ca.crt']);
  t.same(bundles(s), Array(5).fill(ca.data['ca.crt']), 'all five webhooks trust exactly the CA');
  t.same(
    (s.webhooks.validatingwebhookconfiguration!.webhooks as Obj[]).map((w) => w.clientConfig.service.path),
    ['/validate', '/validate', '/validate', '/validate'],
    'the rest of clientConfig is kept',
  );
});

t.test('renewal: same CA, same caBundle, a new serving certificate', async (t) => {
  const c = cluster(t);
  await jobRun(t, c);
  const before = c.state();
  t.match(await jobRun(t, c), /signing with the CA kept in secret\/netattach-ca/);
  const after = c.state();
  t.equal(secret(after, 'netattach-ca').data['ca.crt'], secret(before, 'netattach-ca').data['ca.crt']);
  t.same(bundles(after), bundles(before));
  t.not(secret(after, 'netattach-tls').data['tls.crt'], secret(before, 'netattach-tls').data['tls.crt']);
  // The verbs and names the job's Role and ClusterRole allow, nothing else.
  for (const call of after.calls) {
    const words = call.split(' ');
    const verb = words[0] === '-n' ? words[2] : words[0];
    t.ok(['get', 'create', 'apply', 'patch'].includes(verb ?? ''), `${call.slice(0, 60)}: ${verb}`);
    if (verb === 'get' || verb === 'patch') t.match(call, /(secret netattach-(ca|tls)|webhookconfiguration netattach) /, 'a named object');
  }
});

t.test('a replaced CA: the bundle trusts the new CA and the previous one', async (t) => {
  const c = cluster(t);
  await jobRun(t, c);
  const oldCa = Buffer.from(secret(c.state(), 'netattach-ca').data['ca.crt'], 'base64').toString().trim();
  // What `kubectl delete secret netattach-ca` does, in the fake's state.
  const { calls: _calls, ...s } = c.state();
  delete s.secrets['netattach-system/netattach-ca'];
  writeFileSync(join(c.tmp(), '..', 'state.json'), JSON.stringify(s));
  await jobRun(t, c);
  const newCa = Buffer.from(secret(c.state(), 'netattach-ca').data['ca.crt'], 'base64').toString().trim();
  t.not(newCa, oldCa);
  for (const b of bundles(c.state())) t.same(pems(b), [newCa, oldCa], 'new CA first, then the old one');
  // The next run (the monthly renewal), long after the kubelet refreshed the Secret, drops it.
  await jobRun(t, c);
  for (const b of bundles(c.state())) t.same(pems(b), [newCa], 'then the new CA alone');
});

t.test('usage errors exit 2', async (t) => {
  const c = cluster(t);
  t.equal(c.sh().code, 2);
  t.equal(c.sh('rotate', '/tmp').code, 2);
});
