// `netattach serve --policy FILE` in-process over real HTTPS with the real admission core: deny,
// warn, audit (log + metric), live reload, an invalid rewrite keeping the last valid version,
// and uniqueness across the mutate -> validate sequence and under a concurrent race.
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { stringify } from 'yaml';
import { startServe, type Serving } from '../../src/cli/serve.js';
import type { AdmissionReview } from '../../src/admission/types.js';
import { getHttp, request } from '../server/fixtures.js';
import { eventually, nadObject, podCreate, policyDoc } from './policy-helpers.js';

const GUID_KEY = 'infiniband-guid';
const ib = (guid: string) => JSON.stringify([{ name: 'ib', [GUID_KEY]: guid }]);

const POLICIES = (warnAction: string) =>
  [
    policyDoc('enforce', 'rules:\n  allowedNetworks: {ownNamespace: true}'),
    policyDoc('warn', `rules:\n  interfaceNames: {allowed: ["net*"], action: ${warnAction}}`),
    policyDoc(
      'audit',
      'namespaceSelector:\n  matchLabels: {kubernetes.io/metadata.name: audited}\naction: Audit\nrules:\n  maxAttachments: {max: 0}',
    ),
    policyDoc('unique', 'rules:\n  uniqueAddresses: {infiniband-guid: Cluster}'),
  ].join('---\n');

async function serve(t: Test): Promise<{ serving: Serving; ca: string; policyFile: string; logs: () => Array<Record<string, unknown>> }> {
  const nads = [
    nadObject('default', 'net-a'),
    nadObject('default', 'ib', ['infinibandGUID']),
    nadObject('team-b', 'net-b'),
    nadObject('audited', 'net-a'),
  ];
  const dir = t.testdir({
    nads: Object.fromEntries(nads.map((n, i) => [`${i}.yaml`, stringify(n)])),
    'policies.yaml': POLICIES('Warn'),
  });
  const out: string[] = [];
  const serving = await startServe(
    ['--tls-dir', 'tls', '--nads', 'nads', '--policy', 'policies.yaml', '--port', '0', '--health-port', '0', '--host', '127.0.0.1'],
    { stdout: (s) => out.push(s), stderr: (s) => out.push(s), stdin: Readable.from([]), env: {}, cwd: dir },
  );
  if (serving === 'help') throw new Error('help');
  t.teardown(() => serving.server.close());
  // The NAD directory is read in the background: until then every Pod CREATE would get a 503.
  await eventually(async () => serving.server.readiness().ready, Boolean, 'readiness');
  const ca = readFileSync(join(dir, 'tls', 'ca.crt'), 'utf8');
  const logs = () =>
    out
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { serving, ca, policyFile: join(dir, 'policies.yaml'), logs };
}

const send = async (serving: Serving, ca: string, endpoint: 'mutate' | 'validate', review: AdmissionReview) =>
  (await request(`${serving.url}/${endpoint}`, JSON.stringify(review), { ca })).json.response as {
    allowed: boolean;
    status?: { code: number; message: string };
    warnings?: string[];
  };

t.test('serve --policy FILE: deny, warn, audit, live reload, invalid rewrite', async (t) => {
  const { serving, ca, policyFile, logs } = await serve(t);
  const metrics = async () => (await getHttp(`${serving.healthUrl}/metrics`)).text;

  const ready = await eventually(
    () => getHttp(`${serving.healthUrl}/readyz`),
    (r) => r.status === 200,
    'readiness',
  );
  t.same(ready.json.checks.policies, { ok: true });
  t.ok(
    logs().some(
      (l) => l.msg === 'policies: offline mode' && l.policies === `file ${policyFile}` && l.podIndex === 'reservations only (no cluster)',
    ),
  );
  t.match(await metrics(), `netattach_policies_loaded{source="file:${policyFile}"} 4`);

  const denied = await send(serving, ca, 'validate', podCreate({ name: 'p1', uid: 'u1', networks: 'team-b/net-b' }));
  t.notOk(denied.allowed, 'enforced');
  t.equal(denied.status?.code, 403);
  t.match(denied.status?.message, /\[0\]: Forbidden: policy "enforce" \(allowedNetworks\): network "team-b\/net-b" is not allowed/);

  const warned = await send(serving, ca, 'validate', podCreate({ name: 'p2', uid: 'u2', networks: 'net-a@eth5' }));
  t.ok(warned.allowed, 'warned, admitted');
  t.match(warned.warnings, [/\[0\]\.interface: Forbidden: policy "warn" \(interfaceNames\)/]);

  const audited = await send(serving, ca, 'validate', podCreate({ namespace: 'audited', name: 'p3', uid: 'u3', networks: 'net-a' }));
  t.ok(audited.allowed, 'audit only');
  t.notOk(audited.warnings, 'no warning for an audit');
  t.ok(
    logs().some((l) => l.msg === 'audit findings' && JSON.stringify(l.audits).includes('audit/maxAttachments')),
    'audit log line',
  );
  t.match(await metrics(), 'netattach_policy_findings_total{endpoint="validate",policy="audit",rule="maxAttachments",action="Audit"} 1');
  await send(serving, ca, 'mutate', podCreate({ namespace: 'audited', name: 'p3', networks: 'net-a' }));
  const counted = await metrics();
  t.match(
    counted,
    'netattach_policy_findings_total{endpoint="mutate",policy="audit",rule="maxAttachments",action="Audit"} 1',
    'once per review, by endpoint',
  );
  t.match(counted, 'netattach_policy_findings_total{endpoint="validate",policy="audit",rule="maxAttachments",action="Audit"} 1');
  t.notMatch(counted, 'netattach_policy_evaluations_total');

  // Live: the warn policy becomes Enforce.
  writeFileSync(policyFile, POLICIES('Enforce'));
  const now = await eventually(
    () => send(serving, ca, 'validate', podCreate({ name: 'p4', uid: 'u4', networks: 'net-a@eth5' })),
    (r) => !r.allowed,
    'the rewritten policy to apply',
  );
  t.match(now.status?.message, /policy "warn" \(interfaceNames\)/);

  // Invalid rewrite of that policy: reported, its last valid version (Enforce) stays.
  writeFileSync(
    policyFile,
    POLICIES('Enforce').replace('interfaceNames: {allowed: ["net*"], action: Enforce}', 'interfaceNames: {allowed: [], action: Warn}'),
  );
  await eventually(
    metrics,
    (m) => m.includes(`netattach_policy_invalid_total{source="file:${policyFile}",policy="warn"} 1`),
    'the invalid document counted',
  );
  t.ok(
    logs().some((l) => l.policy === 'warn' && l.kept === true && String(l.msg).includes('the previous valid version stays in force')),
    'logged',
  );
  const still = await send(serving, ca, 'validate', podCreate({ name: 'p5', uid: 'u5', networks: 'net-a@eth5' }));
  t.notOk(still.allowed, 'the last valid version is still enforced');
  t.match(await metrics(), `netattach_policies_loaded{source="file:${policyFile}"} 4`);
});

t.test('uniqueness through the real server: mutate then validate of one pod, other pods denied, a race has one winner', async (t) => {
  const { serving, ca } = await serve(t);
  const index = serving.policy.index;
  const G1 = '00:11:22:33:44:55:66:01';
  const G2 = '00:11:22:33:44:55:66:02';

  // A named pod: mutate (no uid yet) reserves by name; validate (uid now) is the same pod.
  t.ok((await send(serving, ca, 'mutate', podCreate({ name: 'db-0', networks: ib(G1) }))).allowed, 'named: mutate');
  t.ok((await send(serving, ca, 'validate', podCreate({ name: 'db-0', uid: 'u-db0', networks: ib(G1) }))).allowed, 'named: validate');
  t.equal(index.stats().reservations, 1, 'one reservation for the pod');

  // generateName: mutate has no identity and claims nothing; validate judges and reserves.
  t.ok((await send(serving, ca, 'mutate', podCreate({ generateName: 'web-', networks: ib(G2) }))).allowed, 'generateName: mutate');
  t.equal(index.stats().reservations, 1);
  t.ok(
    (await send(serving, ca, 'validate', podCreate({ generateName: 'web-', name: 'web-x1', uid: 'u-web', networks: ib(G2) }))).allowed,
    'generateName: validate',
  );
  t.equal(index.stats().reservations, 2);

  // Dry run: judged, never reserved.
  t.ok(
    (await send(serving, ca, 'validate', podCreate({ name: 'dry', uid: 'u-dry', networks: ib('00:11:22:33:44:55:66:0f'), dryRun: true })))
      .allowed,
  );
  t.equal(index.stats().reservations, 2, 'dry run reserves nothing');

  // Other pods asking for those GUIDs, on either endpoint.
  for (const endpoint of ['mutate', 'validate'] as const) {
    const other = await send(
      serving,
      ca,
      endpoint,
      podCreate({ name: 'db-1', ...(endpoint === 'validate' ? { uid: 'u-db1' } : {}), networks: ib(G1) }),
    );
    t.notOk(other.allowed, `another pod (${endpoint})`);
    t.match(other.status?.message, /is already used by pod default\/db-0 \(being created\)/);
  }
  const twin = await send(serving, ca, 'validate', podCreate({ generateName: 'web-', name: 'web-x2', uid: 'u-web2', networks: ib(G2) }));
  t.notOk(twin.allowed, 'a second replica of the same template');

  // The race: N different pods, one GUID, in parallel through HTTPS.
  const N = 24;
  const G3 = '00:11:22:33:44:55:66:03';
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      send(serving, ca, 'validate', podCreate({ name: `race-${i}`, uid: `u-race-${i}`, networks: ib(G3) })),
    ),
  );
  t.equal(results.filter((r) => r.allowed).length, 1, 'exactly one of the racing pods is admitted');
  t.ok(
    results
      .filter((r) => !r.allowed)
      .every((r) => /is already used by pod default\/race-\d+ \(being created\)/.test(r.status?.message ?? '')),
  );
});
