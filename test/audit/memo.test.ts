// The audit's verdict memo: replicas of one template (same namespace and annotation text, no
// address) are judged once; a hit is what a fresh judgement gives, whatever changed since, and the
// memo stays within its cap.
import t, { type Test } from 'tap';
import { auditPod, type AuditContext, type LivePod } from '../../src/audit/index.js';
import { AuditMemo, MEMO_ENTRIES, MEMO_FINDINGS, MEMO_MAX_AGE_MS, MEMO_TEXT_CHARS } from '../../src/audit/memo.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { nadKey, type Nad, type NadLookup } from '../../src/nads/index.js';
import { AddressIndex, EMPTY_POLICY_SET, EXEMPT_LABEL, PolicyEngine, type PolicySet } from '../../src/policy/index.js';
import { StaticDraView, type DraView } from '../../src/dra/index.js';
import { nadFromObject } from '../../src/nads/index.js';
import { nad as nadObject } from '../check/helpers.js';
import { live, nad, policiesOf, ONLY_SRIOV, UNIQUE_MACS } from './helpers.js';

interface World {
  ctx: AuditContext;
  nads: Map<string, Nad>;
  labels: Map<string, Record<string, string>>;
  engine: PolicyEngine;
  index: AddressIndex;
  nadReads: () => number;
}

function world(policies: PolicySet = policiesOf(ONLY_SRIOV), dra?: DraView): World {
  const nads = new Map<string, Nad>(
    [nad('team-a', 'sriov-net'), nad('team-a', 'macvlan', ['ips']), nad('team-b', 'sriov-net')].map((n) => [
      nadKey(n.namespace, n.name),
      n,
    ]),
  );
  const labels = new Map<string, Record<string, string>>();
  const index = new AddressIndex();
  const engine = new PolicyEngine({ index, policies });
  let reads = 0;
  const ctx: AuditContext = {
    nads: (ns, name): NadLookup => {
      reads++;
      const n = nads.get(nadKey(ns, name));
      return n ? { status: 'found', nad: n } : { status: 'not-found' };
    },
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns, ...labels.get(ns) }),
    policy: engine,
    get policies() {
      return engine.policies();
    },
    config: DEFAULT_ADMISSION_CONFIG,
    ...(dra ? { dra } : {}),
  };
  return { ctx, nads, labels, engine, index, nadReads: () => reads };
}

const claimed = nadFromObject(
  nadObject('claimed', {
    namespace: 'team-a',
    resourceName: 'example.com/net_claimed',
    annotations: { 'netattach.io/resourceClaimTemplate': 'net-claimed' },
  }),
);

const withController = (p: LivePod, uid: string): LivePod => ({
  ...p,
  controller: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid },
});

t.test('replicas of one template: judged once, each given what a fresh judgement gives', async (t) => {
  const w = world();
  const memo = new AuditMemo();
  const replicas = [
    live('team-a', 'web-1', 'macvlan'),
    live('team-a', 'web-2', 'macvlan', 'other-uid'),
    withController(live('team-a', 'web-3', 'macvlan'), 'rs-uid'),
    live('team-a', 'web-4', 'macvlan', ''),
  ];
  for (const p of replicas) t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), p.name);
  t.match(memo.judge(replicas[0]!, w.ctx), [{ policy: 'only-sriov', rule: 'allowedNetworks', result: 'fail' }], 'the finding itself');
  t.strictSame(memo.stats(), { entries: 1, hits: 4, misses: 1 });
  // Another namespace, another text, a default network, an empty text: each its own entry.
  const others = [
    live('team-b', 'web-1', 'macvlan'),
    live('team-a', 'api', 'sriov-net'),
    { ...live('team-a', 'd'), defaultNetwork: 'macvlan' },
    live('team-a', 'e', ''),
  ];
  for (const p of others) t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), `${p.namespace}/${p.name}`);
  t.equal(memo.stats().entries, 5);
  t.equal(memo.stats().hits, 4, "none of them took another's verdict");
});

t.test('a hit is checked against what decided it: NADs, labels, policies, age', async (t) => {
  let now = 1_000;
  const w = world();
  const memo = new AuditMemo({ now: () => now, maxAgeMs: 5_000 });
  const p = live('team-a', 'web-1', 'sriov-net');
  const q = live('team-a', 'web-2', 'sriov-net');
  t.strictSame(memo.judge(p, w.ctx), []);
  // The NAD is deleted: the next replica finds it missing, as a fresh judgement does.
  w.nads.delete(nadKey('team-a', 'sriov-net'));
  t.match(memo.judge(q, w.ctx), [{ rule: 'networkExists' }]);
  t.strictSame(memo.judge(q, w.ctx), auditPod(q, w.ctx));
  // Created again (a new cache entry): judged again.
  w.nads.set(nadKey('team-a', 'sriov-net'), nad('team-a', 'sriov-net'));
  t.strictSame(memo.judge(q, w.ctx), []);
  t.match(memo.judge(live('team-a', 'w', 'macvlan'), w.ctx), [{ rule: 'allowedNetworks' }]);
  // The namespace is exempted by a label: judged again (the exemption finding is bookkeeping, not a finding).
  w.labels.set('team-a', { [EXEMPT_LABEL]: 'true' });
  t.strictSame(memo.judge(live('team-a', 'x', 'macvlan'), w.ctx), auditPod(live('team-a', 'x', 'macvlan'), w.ctx));
  t.strictSame(memo.judge(live('team-a', 'x', 'macvlan'), w.ctx), []);
  w.labels.delete('team-a');
  t.match(memo.judge(live('team-a', 'y', 'macvlan'), w.ctx), [{ rule: 'allowedNetworks' }], 'the label gone: the policy applies again');
  // The policies change: judged again.
  w.engine.setPolicies(EMPTY_POLICY_SET);
  t.strictSame(memo.judge(live('team-a', 'z', 'macvlan'), w.ctx), [], 'no policy, no finding');
  const misses = memo.stats().misses;
  t.strictSame(memo.judge(live('team-a', 'z2', 'macvlan'), w.ctx), []);
  t.equal(memo.stats().misses, misses, 'the same inputs again: a hit');
  // Past its age: judged again, and kept anew.
  now += 5_001;
  memo.judge(live('team-a', 'z3', 'macvlan'), w.ctx);
  t.equal(memo.stats().misses, misses + 1, 'an old entry is judged again');
  now += 4_000;
  memo.judge(live('team-a', 'z4', 'macvlan'), w.ctx);
  t.equal(memo.stats().misses, misses + 1, 'a used entry is young again');
  now += 4_000;
  memo.judge(live('team-a', 'z5', 'macvlan'), w.ctx);
  t.equal(memo.stats().misses, misses + 1, 'its age counts from its last use');
});

t.test('a pod with an address is judged every time against the live pods, never kept', async (t) => {
  const w = world(policiesOf(UNIQUE_MACS));
  const memo = new AuditMemo();
  const text = '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]';
  const a = live('team-a', 'a', text);
  const b = live('team-a', 'b', text);
  t.strictSame(memo.judge(a, w.ctx), [], 'alone with its MAC');
  t.strictSame(memo.stats(), { entries: 0, hits: 0, misses: 1 });
  // Another live pod takes the MAC: the same text now fails.
  w.index.setPod({ namespace: 'team-a', name: 'b', uid: 'uid-b' }, [
    { kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/sriov-net' },
  ]);
  t.match(memo.judge(a, w.ctx), [{ rule: 'uniqueAddresses', message: /already used by pod team-a\/b/ }]);
  t.strictSame(memo.judge(b, w.ctx), auditPod(b, w.ctx), 'the other holder, named by its own judgement');
  t.equal(memo.stats().entries, 0);
  // The key written escaped: not the shortcut, and still never kept (the judgement saw the address).
  const escaped = '[{"name":"sriov-net","\\u006dac":"02:00:00:00:00:01"}]';
  t.equal(JSON.parse(escaped)[0].mac, '02:00:00:00:00:01');
  const c = live('team-a', 'c', escaped);
  t.match(memo.judge(c, w.ctx), [{ rule: 'uniqueAddresses' }], 'judged against the live pods');
  t.strictSame(memo.judge(c, w.ctx), auditPod(c, w.ctx));
  t.equal(memo.stats().entries, 0, 'never kept');
  // cni-args and GUIDs take the shortcut too; a network named like a key does not hide anything.
  for (const text of [
    '[{"name":"sriov-net","cni-args":{"mac":"02:00:00:00:00:09"}}]',
    '[{"name":"sriov-net","infiniband-guid":"00:11:22:33:44:55:66:77"}]',
  ]) {
    const p = live('team-a', 'g', text);
    t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), text);
  }
  t.equal(memo.stats().entries, 0);
});

t.test('a pod whose judgement reads the DRA view is judged every time, never kept; one that does not is kept', async (t) => {
  const templates = [{ namespace: 'team-b', name: 'net-claimed' }];
  const view = new StaticDraView([], templates);
  let reads = 0;
  // Counting reads through the view, with its optional reads as it has them.
  const dra: DraView = { classesFor: (r) => (reads++, view.classesFor(r)), template: (ns, n) => (reads++, view.template(ns, n)) };
  const w = world(EMPTY_POLICY_SET, dra);
  w.nads.set(nadKey('team-a', 'claimed'), claimed);
  const memo = new AuditMemo();
  memo.judge(live('team-a', 'p', 'macvlan'), w.ctx);
  t.equal(reads, 0);
  t.equal(memo.stats().entries, 1, 'no DRA read: kept');
  const q = live('team-a', 'q', 'claimed');
  t.match(memo.judge(q, w.ctx), [{ rule: 'claimTemplateExists', result: 'fail' }]);
  t.ok(reads > 0, 'the view was read');
  t.equal(memo.stats().entries, 1, 'and the verdict not kept');
  // The template appears: the next replica sees it (nothing kept could hide it).
  templates.push({ namespace: 'team-a', name: 'net-claimed' });
  const fresh = new StaticDraView([], templates);
  dra.template = (ns, n) => (reads++, fresh.template(ns, n));
  t.strictSame(memo.judge(live('team-a', 'r', 'claimed'), w.ctx), []);
});

t.test('bounded: at the cap the least recently used entry goes; long texts and many findings are not kept', async (t) => {
  const w = world();
  const memo = new AuditMemo({ cap: 3 });
  const pods = ['a', 'b', 'c', 'd'].map((ns) => live(ns, 'p', 'macvlan'));
  for (const p of pods.slice(0, 3)) memo.judge(p, w.ctx);
  t.equal(memo.stats().entries, 3);
  memo.judge(pods[0]!, w.ctx); // a: used again, most recent
  memo.judge(pods[3]!, w.ctx); // d: b goes
  t.equal(memo.stats().entries, 3, 'never more than the cap');
  const misses = memo.stats().misses;
  memo.judge(live('a', 'q', 'macvlan'), w.ctx);
  memo.judge(live('c', 'q', 'macvlan'), w.ctx);
  memo.judge(live('d', 'q', 'macvlan'), w.ctx);
  t.equal(memo.stats().misses, misses, 'a, c and d kept');
  t.strictSame(memo.judge(live('b', 'q', 'macvlan'), w.ctx), auditPod(live('b', 'q', 'macvlan'), w.ctx), 'b judged again, rightly');
  t.equal(memo.stats().misses, misses + 1);
  t.equal(memo.stats().entries, 3);
  // A text past MEMO_TEXT_CHARS: judged, not kept.
  const long = live('a', 'long', `[${Array.from({ length: Math.ceil(MEMO_TEXT_CHARS / 20) }, () => '{"name":"macvlan"}').join(',')}]`);
  const before = memo.stats();
  t.strictSame(memo.judge(long, w.ctx), auditPod(long, w.ctx));
  t.strictSame(memo.judge(long, w.ctx), auditPod(long, w.ctx));
  t.equal(memo.stats().misses, before.misses + 2, 'judged each time');
  // More findings than MEMO_FINDINGS: judged, not kept.
  const many = live('a', 'many', JSON.stringify(Array.from({ length: MEMO_FINDINGS + 1 }, (_, i) => ({ name: `missing-${i}` }))));
  t.ok(auditPod(many, w.ctx).length > MEMO_FINDINGS);
  const m0 = memo.stats().misses;
  memo.judge(many, w.ctx);
  memo.judge(many, w.ctx);
  t.equal(memo.stats().misses, m0 + 2, 'judged each time');
  t.ok(MEMO_ENTRIES >= 256 && MEMO_ENTRIES <= 4096, 'the default cap: a few per namespace, bounded');
  memo.clear();
  t.equal(memo.stats().entries, 0);
});

t.test('texts with newlines: two pods share a key only when both texts are the same', async (t) => {
  const w = world();
  const memo = new AuditMemo();
  // Without the first text's length in the key, ('macvlan\n+sriov-net', absent) and ('macvlan', 'sriov-net\n-') were one key.
  const first = live('team-a', 'first', 'macvlan\n+sriov-net');
  const second = { ...live('team-a', 'second', 'macvlan'), defaultNetwork: 'sriov-net\n-' };
  t.notSame(auditPod(first, w.ctx), auditPod(second, w.ctx), 'the two are judged differently');
  t.strictSame(memo.judge(first, w.ctx), auditPod(first, w.ctx));
  t.strictSame(memo.judge(second, w.ctx), auditPod(second, w.ctx), "not the first one's verdict");
  t.strictSame(memo.stats(), { entries: 2, hits: 0, misses: 2 });
});

/** Judged twice by a new memo: was the second a hit (the first kept), and was each what a fresh judgement gives? */
function keptAfterTwo(t: Test, p: LivePod, ctx: AuditContext, what: string): boolean {
  const memo = new AuditMemo();
  const fresh = auditPod(p, ctx);
  t.ok(fresh.length <= MEMO_FINDINGS, `${what}: few findings (not what decides)`);
  t.strictSame(memo.judge(p, ctx), fresh, `${what}: first`);
  t.strictSame(memo.judge(p, ctx), fresh, `${what}: second`);
  return memo.stats().hits === 1;
}

/** A networks text of exactly `chars` characters selecting team-a/sriov-net (JSON, padded with spaces). */
const networksOf = (chars: number, name = 'sriov-net'): string => {
  const head = `[{"name":"${name}"}`;
  return head + ' '.repeat(chars - head.length - 1) + ']';
};
/** A default-network text of exactly `chars` characters selecting team-a/sriov-net (a padded name). */
const defaultOf = (chars: number): string => 'team-a/sriov-net'.padEnd(chars, ' ');

t.test('the documented numbers', async (t) => {
  t.equal(MEMO_ENTRIES, 1024);
  t.equal(MEMO_TEXT_CHARS, 2048);
  t.equal(MEMO_FINDINGS, 16);
  t.equal(MEMO_MAX_AGE_MS, 60_000);
});

t.test('the default cap: MEMO_ENTRIES entries, the least recently used out first', async (t) => {
  const w = world();
  const memo = new AuditMemo();
  for (let i = 0; i <= MEMO_ENTRIES; i++) memo.judge(live(`ns-${i}`, 'p', 'sriov-net'), w.ctx);
  t.strictSame(memo.stats(), { entries: MEMO_ENTRIES, hits: 0, misses: MEMO_ENTRIES + 1 });
  memo.judge(live('ns-1', 'q', 'sriov-net'), w.ctx);
  t.equal(memo.stats().hits, 1, 'the second kept');
  memo.judge(live('ns-0', 'q', 'sriov-net'), w.ctx);
  t.equal(memo.stats().misses, MEMO_ENTRIES + 2, 'the first gone');
});

t.test('the key: texts of MEMO_TEXT_CHARS characters in total kept, one more not, across both annotations', async (t) => {
  const w = world();
  const pod = (networks?: string, defaultNetwork?: string): LivePod => ({
    ...live('team-a', 'p', networks),
    ...(defaultNetwork !== undefined ? { defaultNetwork } : {}),
  });
  t.equal(networksOf(MEMO_TEXT_CHARS).length, MEMO_TEXT_CHARS);
  t.equal(defaultOf(MEMO_TEXT_CHARS).length, MEMO_TEXT_CHARS);
  t.ok(keptAfterTwo(t, pod(networksOf(MEMO_TEXT_CHARS)), w.ctx, 'networks at the bound'));
  t.notOk(keptAfterTwo(t, pod(networksOf(MEMO_TEXT_CHARS + 1)), w.ctx, 'networks one past'));
  t.ok(keptAfterTwo(t, pod(undefined, defaultOf(MEMO_TEXT_CHARS)), w.ctx, 'default network at the bound'));
  t.notOk(keptAfterTwo(t, pod(undefined, defaultOf(MEMO_TEXT_CHARS + 1)), w.ctx, 'default network one past'));
  const half = MEMO_TEXT_CHARS / 2;
  t.ok(keptAfterTwo(t, pod(networksOf(half), defaultOf(half)), w.ctx, 'both, at the bound together'));
  t.notOk(keptAfterTwo(t, pod(networksOf(half + 1), defaultOf(half)), w.ctx, 'both, one past together'));
  t.notOk(keptAfterTwo(t, pod(networksOf(half), defaultOf(half + 1)), w.ctx, 'both, one past together (the other one longer)'));
  // Texts too long to keep never share anything: each is judged on its own.
  const memo = new AuditMemo();
  const allowed = pod(networksOf(MEMO_TEXT_CHARS + 1));
  const denied = pod(networksOf(MEMO_TEXT_CHARS + 1, 'macvlan'));
  t.strictSame(memo.judge(allowed, w.ctx), []);
  t.match(memo.judge(denied, w.ctx), [{ rule: 'allowedNetworks', result: 'fail' }], "not the other long text's verdict");
  t.strictSame(memo.stats(), { entries: 0, hits: 0, misses: 2 });
});

t.test('absent, empty and "-" annotations never share a key, in either annotation', async (t) => {
  const w = world();
  const memo = new AuditMemo();
  const texts = [undefined, '', '-', 'undefined', '+', 'sriov-net'];
  const defaults = [undefined, '', '-', 'undefined', '+', 'team-a/sriov-net', 'team-a/macvlan'];
  const pods: LivePod[] = [];
  for (const n of texts)
    for (const d of defaults) pods.push({ ...live('team-a', 'p', n), ...(d !== undefined ? { defaultNetwork: d } : {}) });
  for (const p of pods)
    t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), `${JSON.stringify(p.networks)} ${JSON.stringify(p.defaultNetwork)}`);
  t.strictSame(memo.stats(), { entries: pods.length, hits: 0, misses: pods.length }, 'each its own entry');
  for (const p of pods)
    t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), `again: ${JSON.stringify(p.networks)} ${JSON.stringify(p.defaultNetwork)}`);
  t.strictSame(memo.stats(), { entries: pods.length, hits: pods.length, misses: pods.length }, 'each found again');
});

t.test('findings: MEMO_FINDINGS kept, one more not', async (t) => {
  const w = world(EMPTY_POLICY_SET);
  const missing = (count: number): LivePod =>
    live('team-a', 'p', JSON.stringify(Array.from({ length: count }, (_, i) => ({ name: `missing-${i}` }))));
  t.equal(auditPod(missing(MEMO_FINDINGS), w.ctx).length, MEMO_FINDINGS, 'one finding per missing network');
  const at = new AuditMemo();
  at.judge(missing(MEMO_FINDINGS), w.ctx);
  t.strictSame(at.judge(missing(MEMO_FINDINGS), w.ctx), auditPod(missing(MEMO_FINDINGS), w.ctx));
  t.strictSame(at.stats(), { entries: 1, hits: 1, misses: 1 }, 'at the bound: kept');
  const past = new AuditMemo();
  past.judge(missing(MEMO_FINDINGS + 1), w.ctx);
  t.strictSame(past.judge(missing(MEMO_FINDINGS + 1), w.ctx), auditPod(missing(MEMO_FINDINGS + 1), w.ctx));
  t.strictSame(past.stats(), { entries: 0, hits: 0, misses: 2 }, 'one past: judged each time');
});

t.test('age: an entry unused for exactly MEMO_MAX_AGE_MS is used, one millisecond more is judged again', async (t) => {
  let now = 5_000;
  const w = world();
  const memo = new AuditMemo({ now: () => now });
  const p = live('team-a', 'p', 'macvlan');
  memo.judge(p, w.ctx);
  now += MEMO_MAX_AGE_MS;
  t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx));
  t.strictSame(memo.stats(), { entries: 1, hits: 1, misses: 1 }, 'exactly the age: a hit');
  now += MEMO_MAX_AGE_MS + 1;
  t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx));
  t.strictSame(memo.stats(), { entries: 1, hits: 1, misses: 2 }, 'one past: judged again, and kept anew');
});

t.test('a text with a key that may hold an address is judged at once and never kept, even when it holds none', async (t) => {
  const w = world(EMPTY_POLICY_SET);
  // The shortcut reads the text, not the judgement: an interface named like the key takes it too.
  for (const key of ['mac', 'infiniband-guid', 'cni-args']) {
    const memo = new AuditMemo();
    const p = live('team-a', 'p', `[{"name":"sriov-net","interface":"${key}"}]`);
    t.strictSame(auditPod(p, w.ctx), [], `${key}: a clean pod, no address`);
    t.strictSame(memo.judge(p, w.ctx), []);
    t.strictSame(memo.judge(p, w.ctx), []);
    t.strictSame(memo.stats(), { entries: 0, hits: 0, misses: 2 }, `${key}: judged each time`);
  }
  const memo = new AuditMemo();
  const p = live('team-a', 'p', '[{"name":"sriov-net","interface":"net1"}]');
  memo.judge(p, w.ctx);
  memo.judge(p, w.ctx);
  t.strictSame(memo.stats(), { entries: 1, hits: 1, misses: 1 }, 'another interface name: kept');
});

t.test('a hit reads again exactly the NAD entries its judgement read, found or not', async (t) => {
  const w = world(EMPTY_POLICY_SET);
  const reads: string[][] = [];
  const ctx: AuditContext = { ...w.ctx, nads: (ns, name) => (reads.push([ns, name]), w.ctx.nads(ns, name)) };
  const memo = new AuditMemo();
  const text = 'sriov-net,gone,team-b/sriov-net';
  t.match(memo.judge(live('team-a', 'p', text), ctx), [{ rule: 'networkExists' }], 'one not found');
  const judged = reads.splice(0);
  t.strictSame(
    [...new Map(judged.map((r) => [r.join('/'), r])).values()],
    [
      ['team-a', 'sriov-net'],
      ['team-a', 'gone'],
      ['team-b', 'sriov-net'],
    ],
    'what the judgement read',
  );
  t.match(memo.judge(live('team-a', 'q', text), ctx), [{ rule: 'networkExists' }]);
  t.equal(memo.stats().hits, 1);
  t.strictSame(reads.splice(0), judged, 'the hit: the same lookups, nothing else');
  // The missing NAD is created: found where it was not, so judged again.
  w.nads.set(nadKey('team-a', 'gone'), nad('team-a', 'gone'));
  t.strictSame(memo.judge(live('team-a', 'r', text), ctx), []);
  t.strictSame(memo.stats(), { entries: 1, hits: 1, misses: 2 });
});

t.test("a pod's judgement reads only template() of the DRA view (what the memo's other wrappers guard is never read)", async (t) => {
  // The other reads serve pod claims (netattach.io/networkClaims, spec.resourceClaims) and NADs:
  // the audit's pod has neither (requestFor gives it the two network annotations and a placeholder
  // container). Should that change, the memo's wrappers of them start to matter: see the ledger.
  const view = new StaticDraView(
    [{ name: 'net-class', extendedResourceName: 'example.com/net' }],
    [{ namespace: 'team-a', name: 'net-claimed' }],
  );
  const others: string[] = [];
  let templates = 0;
  const dra: DraView = {
    classesFor: (r) => (others.push('classesFor'), view.classesFor(r)),
    template: (ns, n) => (templates++, view.template(ns, n)),
    templateNamespaces: (n) => (others.push('templateNamespaces'), view.templateNamespaces(n)),
    deviceClass: (_n) => (others.push('deviceClass'), undefined),
    templateDevices: (_ns, n) => (
      others.push('templateDevices'), { requests: [{ name: n, alternatives: [{ deviceClassName: 'net-class' }] }] }
    ),
  };
  const w = world(EMPTY_POLICY_SET, dra);
  w.nads.set(nadKey('team-a', 'claimed'), claimed);
  w.nads.set(nadKey('team-a', 'extended'), nad('team-a', 'extended', ['mac', 'ips'], 'example.com/net'));
  const memo = new AuditMemo();
  for (const text of ['claimed', 'extended', 'claimed,extended,sriov-net', '[{"name":"claimed","interface":"net1"}]']) {
    const p = live('team-a', 'p', text);
    t.strictSame(memo.judge(p, w.ctx), auditPod(p, w.ctx), text);
  }
  t.ok(templates > 0, 'template() read');
  t.strictSame(others, [], 'nothing else');
});
