// The real-world corpus (test/compat/real-world/): pods, workloads and NADs reconstructed from
// public repositories at a named release or commit, each with the verdict a real cluster with
// Multus v4.3.0 and the plugins gives. Each goes through `netattach check --mutate` (the webhook's
// own engine; a workload also as the pod its controller creates) and is held to that verdict:
// - a pod whose ADD succeeds is admitted, and one whose ADD certainly fails is denied;
// - the warnings are exactly the recorded causes (each a real risk), one warning a cause, at most
//   MAX_WARNINGS_PER_POD on a pod;
// - the mutation adds exactly the recorded resources, each one the source's set-up advertises
//   and an extended resource name the apiserver accepts (never a pod made unschedulable).
// A case marked knownDisagreement is one where netattach is wrong today: the test asserts that it
// still is, so the mark has to go when netattach is fixed.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { REAL_WORLD, repositoryOf } from './real-world/index.js';
import { judge, MAX_WARNINGS_PER_POD, podOf } from './real-world/judge.js';
import { nad, pod, type RealWorldCase } from './real-world/types.js';

t.test('the corpus: at least 60 cases from at least 10 repositories, each with a source and a reason', async (t) => {
  t.ok(REAL_WORLD.length >= 60, `${REAL_WORLD.length} cases`);
  const repos = new Set(REAL_WORLD.map(repositoryOf));
  t.ok(repos.size >= 10, `${repos.size} repositories: ${[...repos].join(', ')}`);
  const names = new Set<string>();
  for (const c of REAL_WORLD) {
    t.notOk(names.has(c.name), `${c.name}: a unique name`);
    names.add(c.name);
    t.match(c.source, /^[\w.-]+\/[\w.-]+@[\w.-]+ \S/, `${c.name}: source is owner/repo@ref path`);
    t.ok(c.reason.length > 20, `${c.name}: a reason`);
    const last = c.objects[c.objects.length - 1]!;
    t.ok(['Pod', 'Deployment', 'StatefulSet', 'DaemonSet'].includes(String(last['kind'])), `${c.name}: ends with its workload`);
    t.ok(
      c.objects.some((o) => o['kind'] === 'NetworkAttachmentDefinition'),
      `${c.name}: carries the NADs it uses`,
    );
  }
});

t.test('docs/compat.md gives the corpus as it is: each repository, its ref and its counts', async (t) => {
  const doc = readFileSync(new URL('../../docs/compat.md', import.meta.url), 'utf8');
  const denied = REAL_WORLD.filter((c) => !c.verdict.allowed).length;
  const known = REAL_WORLD.filter((c) => c.knownDisagreement).length;
  const repos = [...new Set(REAL_WORLD.map(repositoryOf))];
  t.match(
    doc,
    `${REAL_WORLD.length} cases from ${repos.length} repositories; ${denied} of them certainly fail on a real cluster, ${known} ${known === 1 ? 'is a known disagreement' : 'are known disagreements'}.`,
  );
  const rows = [...doc.matchAll(/^\| `([^`]+)` \| (\S+) \| (\d+) \| (\d+) \| (\d+) \|$/gm)].map((m) => m.slice(1).join(' '));
  const want = repos.map((r) => {
    const cs = REAL_WORLD.filter((c) => repositoryOf(c) === r);
    const refs = [...new Set(cs.map((c) => c.source.split('@')[1]!.split(' ')[0]!))].join(', ');
    return [r, refs, cs.length, cs.filter((c) => !c.verdict.allowed).length, cs.filter((c) => c.knownDisagreement).length].join(' ');
  });
  t.same(rows, want);
});

for (const c of REAL_WORLD) {
  t.test(c.name, async (t) => {
    const j = judge(c);
    if (c.knownDisagreement) {
      t.ok(j.disagreements.length > 0, `still disagrees (${c.knownDisagreement}); remove the mark once fixed`);
      return;
    }
    t.same(j.disagreements, [], `agrees with a real cluster: ${c.reason}`);
  });
}

// The judge itself: each rule bites on a made-up departure (so a lenient judge cannot pass the corpus).
t.test('the judge finds each kind of departure', async (t) => {
  const bridge = nad('br', { cniVersion: '0.3.1', type: 'bridge', bridge: 'br0', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } });
  const sriov = nad('vf', { cniVersion: '1.0.0', type: 'sriov', ipam: {} }, { resourceName: 'example.com/vf' });
  const base = (over: Partial<RealWorldCase>): RealWorldCase => ({
    name: 'judge',
    source: 'example/repo@v1 x.yaml',
    objects: [bridge, pod('p', { networks: 'br' })],
    verdict: { allowed: true },
    reason: 'made up for the judge',
    ...over,
  });
  t.same(judge(base({})).disagreements, [], 'a plain bridge pod agrees');
  t.match(
    judge(base({ objects: [bridge, pod('p', { networks: '[{"name":"br","ips":["10.9.0.0"]}]' })] })).disagreements,
    [/^false denial/],
    'a denial of a pod recorded as running',
  );
  t.match(judge(base({ verdict: { allowed: false } })).disagreements, [/^missed certain failure/], 'an admitted certain failure');
  const missing = base({
    objects: [bridge, pod('p', { networks: 'nope' })],
    verdict: { allowed: false, errors: [/no such NetworkAttachmentDefinition/] },
  });
  t.same(judge(missing).disagreements, [], 'a denial naming the real cause');
  t.match(
    judge({ ...missing, verdict: { allowed: false, errors: [/\.ips: /] } }).disagreements,
    [/^denied for another cause/],
    'a denial for another cause',
  );
  t.match(
    judge(base({ objects: [bridge, pod('p', { networks: '[{"name":"br","gateway":["10.9.0.1"]}]' })] })).disagreements,
    [/^noise: warning/],
    'an unrecorded warning',
  );
  t.match(
    judge(base({ verdict: { allowed: true, warnings: [/never said/] } })).disagreements,
    [/^missing warning/],
    'a recorded warning not given',
  );
  t.match(
    judge(base({ objects: [sriov, pod('p', { networks: 'vf' })] })).disagreements,
    [/nothing in the set-up advertises it/, /the real set-up needs \{\}/],
    'an injected resource nobody advertises',
  );
  t.same(
    judge(
      base({
        objects: [sriov, pod('p', { networks: 'vf' })],
        advertised: ['example.com/vf'],
        verdict: { allowed: true, injects: { app: { 'example.com/vf': '1' } } },
      }),
    ).disagreements,
    [],
    'an advertised, recorded injection agrees',
  );
  const broken = nad('bad', '{"type": "bridge",}');
  t.match(
    judge(base({ objects: [broken, bridge, pod('p', { networks: 'br' })] })).disagreements,
    [/^false denial of NAD bad/],
    'a NAD denied that the case does not list',
  );
  t.same(judge(base({ objects: [broken, bridge, pod('p', { networks: 'br' })], deniedNads: ['bad'] })).disagreements, [], 'a listed one');
  t.match(judge(base({ deniedNads: ['br'] })).disagreements, [/^NAD br admitted/], 'a listed NAD admitted');
  const pinned = nad('pinned', { cniVersion: '0.3.1', type: 'bridge', bridge: 'br0' });
  (pinned['metadata'] as { annotations?: Record<string, string> }).annotations = { 'k8s.v1.cni.cncf.io/nodeSelector': 'rack=a' };
  t.match(
    judge(base({ objects: [pinned, pod('p', { networks: 'pinned' })] })).disagreements,
    [/^node selector \{"rack":"a"\}/],
    'a node selector not recorded',
  );
  t.same(
    judge(base({ objects: [pinned, pod('p', { networks: 'pinned' })], verdict: { allowed: true, nodeSelector: { rack: 'a' } } }))
      .disagreements,
    [],
    'a recorded one',
  );
  t.equal(MAX_WARNINGS_PER_POD, 3);
});

t.test('a workload is judged as the pod its controller creates', async (t) => {
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'apps' },
    spec: { template: { metadata: { annotations: { a: 'b' } }, spec: { containers: [{ name: 'c' }] } } },
  };
  t.same(podOf(d), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { annotations: { a: 'b' }, name: 'web-0', namespace: 'apps' },
    spec: { containers: [{ name: 'c' }] },
  });
});
