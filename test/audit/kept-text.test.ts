// Issue 37, finding 3: what the background audit keeps of live pods' annotation texts is bounded
// per pod and in all; past a bound the pod is reported as not judged, never as clean, and a change
// of its annotation is still noticed.
import t from 'tap';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { BackgroundAudit, POD_TEXT_CHARS, registerAuditMetrics, type AnnotationBudgetOptions } from '../../src/audit/index.js';
import { fingerprintOf, withoutSpace } from '../../src/audit/kept-text.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { parseNetworks } from '../../src/annotation/index.js';
import { nadKey } from '../../src/nads/index.js';
import { AddressIndex, EMPTY_POLICY_SET, PolicyEngine, podNetworkFacts, type PolicySet } from '../../src/policy/index.js';
import { nad, policiesOf, UNIQUE_MACS } from './helpers.js';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
const config = DEFAULT_ADMISSION_CONFIG;

/** The pod watch feeding the index and the audit, as serve wires them. */
function world(texts?: AnnotationBudgetOptions, policies: PolicySet = EMPTY_POLICY_SET) {
  const nads = new Map([nad('a', 'sriov-net')].map((n) => [nadKey(n.namespace, n.name), n]));
  const index = new AddressIndex();
  const registry = new Registry();
  const audit = new BackgroundAudit({
    nads: { get: (ns, name) => nads.get(nadKey(ns, name)), list: () => [...nads.values()], synced: () => true },
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    engine: new PolicyEngine({ index, policies }),
    index,
    config,
    podsUsingNad: () => [],
    ready: () => true,
    sliceMs: 60_000,
    metrics: registerAuditMetrics(registry),
    ...(texts ? { texts } : {}),
  });
  let uid = 0;
  return {
    audit,
    registry,
    add(name: string, networks: string, defaultNetwork?: string) {
      const facts = podNetworkFacts('a', networks, defaultNetwork);
      index.setPod({ namespace: 'a', name, uid: `u-${name}` }, facts.addresses);
      const annotations = { [NETWORKS]: networks, ...(defaultNetwork !== undefined ? { [DEFAULT_NETWORK]: defaultNetwork } : {}) };
      // A fresh object each time, parsed from JSON as the watch parses it.
      audit.upsert(
        JSON.parse(JSON.stringify({ metadata: { namespace: 'a', name, uid: `u-${name}`, resourceVersion: String(++uid), annotations } })),
      );
    },
    remove(name: string) {
      index.removePod('a', name);
      audit.remove({ metadata: { namespace: 'a', name } });
    },
    findings: (name: string) =>
      audit
        .namespaceAudits('a')
        .find((p) => p.pod.name === name)
        ?.findings.map((f) => `${f.rule}:${f.result}`) ?? ['(not held)'],
  };
}

const padded = (pad: number): string => `[{"name":"sriov-net",${' '.repeat(pad)}"interface":"net1"}]`;
/** A valid text of exactly `n` characters with nothing to remove (and a MAC: the pod's own, counted). */
const own = (n: number, mac = '02:00:00:00:00:01'): string => {
  const head = `[{"name":"sriov-net","mac":"${mac}","cni-args":{"k":"`;
  const tail = '"}}]';
  return head + 'x'.repeat(n - head.length - tail.length) + tail;
};

t.test('whitespace next to structure goes; the reader sees the same networks, errors and warnings', async (t) => {
  t.equal(withoutSpace(padded(250_000)), '[{"name":"sriov-net","interface":"net1"}]');
  const kept = ['[{"name":"a b , c : [ ]"}]', '[{"name":"x\\" , "}]', 'net-a, net-b', '[1 2]', '[{"name":"a"} ', '[tru e]'];
  t.equal(withoutSpace(kept[0]!), kept[0], 'nothing to remove: the same string');
  t.equal(withoutSpace(' [ { "name" : "x\\" , " } ] '), '[{"name":"x\\" , "}]', 'inside strings, escapes included, nothing goes');
  t.equal(withoutSpace('net-a , net-b'), 'net-a , net-b', 'the simple form is left as it is');
  t.equal(withoutSpace('[1 , 2 ]   x'), '[1 , 2 ]   x', 'invalid JSON is left as it is (the reader names an offset in it)');
  t.equal(
    withoutSpace(`${'['.repeat(65)} ${']'.repeat(65)}`),
    `${'['.repeat(65)} ${']'.repeat(65)}`,
    'deeper than the reader reads: left as it is',
  );
  t.equal(withoutSpace(`${'['.repeat(64)} ${']'.repeat(64)}`), `${'['.repeat(64)}${']'.repeat(64)}`, "at the reader's depth: compacted");
  const dup = '[ { "name" : "sriov-net" , "name" : "other" , "mac" : "02:00:00:00:00:01" , "cni-args" : { "n" : 8080.0 } } ]';
  const same = (text: string): void => {
    const a = parseNetworks(text, { namespace: 'a' });
    const b = parseNetworks(withoutSpace(text), { namespace: 'a' });
    t.same({ n: b.networks, e: b.errors, w: b.warnings }, { n: a.networks, e: a.errors, w: a.warnings }, text.slice(0, 60));
  };
  same(dup);
  fc.assert(
    fc.property(
      fc.array(
        fc.dictionary(fc.constantFrom('name', 'namespace', 'interface', 'mac', 'ips', 'cni-args', 'x'), fc.jsonValue(), { maxKeys: 4 }),
        { maxLength: 4 },
      ),
      fc.integer({ min: 1, max: 6 }),
      (elements, indent) => {
        const text = JSON.stringify(elements, null, indent);
        const a = parseNetworks(text, { namespace: 'a' });
        const b = parseNetworks(withoutSpace(text), { namespace: 'a' });
        return JSON.stringify([a.networks, a.errors, a.warnings]) === JSON.stringify([b.networks, b.errors, b.warnings]);
      },
    ),
    { numRuns: 300 },
  );
});

t.test('per pod: at the bound the text is kept, one past it the pod is not judged; compacted texts judged as they are', async (t) => {
  const w = world({ podChars: 1000 });
  w.add('at', own(1000));
  w.add('past', own(1001));
  w.add('padded', padded(5000));
  w.add('padded-missing', padded(5000).replace('sriov-net', 'missing'));
  w.audit.drain();
  t.same(w.findings('at'), [], 'at the bound: kept and judged clean');
  t.same(w.findings('past'), ['notJudged:error'], 'one past: not judged, never clean');
  t.same(w.findings('padded'), [], 'compacted under the bound: judged');
  t.same(w.findings('padded-missing'), ['networkExists:fail'], "and its verdict is the text's");
  t.equal(w.audit.notKept(), 1);
  // The kept own text, and the address the unkept pod holds (17 + 11 characters and 48 for the object); the compacted texts are shared.
  t.equal(w.audit.textChars(), 1000 + 17 + 11 + 48, 'what is held is counted');
  const message = w.audit.namespaceAudits('a').find((p) => p.pod.name === 'past')!.findings[0]!.message;
  t.match(
    message,
    /^metadata\.annotations: Too long: 1001 characters of network annotations: not judged by the background audit, which keeps at most 1000 characters/,
  );
  t.notMatch(message, /xxxx/, 'the text itself is not in the message');
  const metrics = await w.registry.metrics();
  t.match(metrics, /netattach_audit_pods\{state="not-kept"\} 1/);
  t.match(metrics, /netattach_audit_findings\{policy="builtin",rule="notJudged",action="Audit",result="error"\} 1/);
  t.equal(POD_TEXT_CHARS, 16 * 1024, 'the documented default');
});

t.test('a pod not kept: a changed annotation is judged again, the same one is not; gone, it is uncounted', async (t) => {
  const w = world({ podChars: 1000 });
  w.add('p', own(2000));
  w.audit.drain();
  t.same(w.findings('p'), ['notJudged:error']);
  w.add('p', own(2000));
  t.equal(w.audit.pending(), 0, 'the same text again (a status change, a relist): nothing to judge');
  w.add('p', own(3000));
  t.equal(w.audit.pending(), 1, 'another text of the same kind: judged again');
  w.audit.drain();
  w.add('p', own(500));
  t.equal(w.audit.pending(), 1, 'now short enough');
  w.audit.drain();
  t.same(w.findings('p'), [], 'kept and judged clean');
  t.equal(w.audit.notKept(), 0);
  t.equal(w.audit.textChars(), 500);
  w.remove('p');
  t.equal(w.audit.textChars(), 0, 'its text uncounted when it goes');
  t.not(fingerprintOf('ab', undefined), fingerprintOf('a', 'b'), 'the two texts told apart');
  t.not(fingerprintOf(undefined, ''), fingerprintOf('', undefined));
});

t.test('in all: at the budget the texts are kept, one past it the pod is not judged until there is room', async (t) => {
  const w = world({ podChars: 1000, totalChars: 900 });
  w.add('a', own(300, '02:00:00:00:00:01'));
  w.add('b', own(300, '02:00:00:00:00:02'));
  w.add('c', own(300, '02:00:00:00:00:03'));
  t.equal(w.audit.textChars(), 900, 'at the budget');
  w.add('d', own(300, '02:00:00:00:00:04'));
  w.add('short', '[{"name":"sriov-net"}]');
  w.audit.drain();
  t.same(['a', 'b', 'c', 'short'].map(w.findings), [[], [], [], []], 'those within it, and a shared text, judged');
  t.same(w.findings('d'), ['notJudged:error'], 'one past: not judged');
  t.match(
    w.audit.namespaceAudits('a').find((p) => p.pod.name === 'd')!.findings[0]!.message,
    /budget of 900 characters for the network annotations of all live pods is full/,
  );
  t.ok(w.audit.textChars() <= 900, `the budget held (${w.audit.textChars()})`);
  w.add('a', own(300, '02:00:00:00:00:01'));
  t.equal(w.audit.pending(), 0, 'a kept pod seen again with the budget full stays kept');
  w.remove('a');
  w.add('d', own(300, '02:00:00:00:00:04'));
  t.equal(w.audit.pending(), 1, 'seen again once there is room');
  w.audit.drain();
  t.same(w.findings('d'), [], 'kept and judged');
  t.equal(w.audit.textChars(), 900);
  t.equal(w.audit.notKept(), 0);
});

t.test('a pod not kept keeps its addresses: the pods sharing one are judged again when it goes', async (t) => {
  const w = world({ podChars: 1000 }, policiesOf(UNIQUE_MACS));
  const mac = '02:00:00:00:00:09';
  w.add('small', `[{"name":"sriov-net","mac":"${mac}"}]`);
  w.add('big', own(5000, mac));
  w.audit.drain();
  t.same(w.findings('small'), ['uniqueAddresses:fail'], 'the big pod holds the MAC too');
  t.same(w.findings('big'), ['notJudged:error']);
  w.remove('big');
  t.equal(w.audit.pending(), 1, 'its sharer queued though its text was not kept');
  w.audit.drain();
  t.same(w.findings('small'), [], 'and clean now');
});

t.test('what is kept of 200 padded 250 KB texts holds none of them: the heap grows by a small share of the 50 MB fed', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const w = world();
  gc();
  const before = process.memoryUsage().heapUsed;
  const fed = 200 * 250_000;
  // Each its own text (a MAC of its own): nothing shared, every one compacted and kept. Half are
  // padded at the end only: what is kept is then one piece of the text, which V8 would keep as a
  // view of the whole unless copied.
  const mac = (i: number): string => `02:00:00:00:${String(Math.floor(i / 100)).padStart(2, '0')}:${String(i % 100).padStart(2, '0')}`;
  for (let i = 0; i < 200; i++) {
    const text =
      i % 2
        ? `[{"name":"sriov-net",${' '.repeat(250_000)}"mac":"${mac(i)}"}]`
        : `[{"name":"sriov-net","mac":"${mac(i)}"}]${' '.repeat(250_000)}`;
    w.add(`p${i}`, text);
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  t.equal(w.audit.notKept(), 0, 'all kept (compacted)');
  t.equal(w.audit.podCount(), 200);
  t.ok(grown < fed / 50, `heap grew ${(grown / 1024).toFixed(0)} KiB for ${fed / 1e6} MB of texts fed (< 1/50 of it)`);
});

t.test('the per-pod bound is of both annotations together; a padded default-network is compacted too', async (t) => {
  const w = world({ podChars: 1000 });
  w.add('both', own(600), own(600, '02:00:00:00:00:02').replace('sriov-net', 'a/sriov-net'));
  w.add('padded-default', '', `[{"name":"a/sriov-net",${' '.repeat(5000)}"interface":"eth0"}]`);
  w.audit.drain();
  t.same(w.findings('both'), ['notJudged:error'], '600 + 600 characters: over the bound together');
  const kept = w.audit.namespaceAudits('a').find((p) => p.pod.name === 'padded-default')!.pod;
  t.equal(kept.defaultNetwork, '[{"name":"a/sriov-net","interface":"eth0"}]', 'kept compacted');
  t.equal(kept.networks, '');
});
