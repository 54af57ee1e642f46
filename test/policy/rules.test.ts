// Rule edges the engine table left untested (found by mutation testing, docs/mutation.md): who
// may set fields, several prefixes and ranges with their boundaries, and uniqueness: which pods
// are judged, twins inside one request, scopes, and how holders are described.
import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { AddressIndex, PolicyEngine, policySet, type PolicyEvaluator } from '../../src/policy/index.js';
import { input, policies, policyYaml } from './helpers.js';

const engine = (spec: string, index?: AddressIndex): PolicyEvaluator =>
  new PolicyEngine({ policies: policySet(policies(policyYaml('p', spec))), ...(index ? { index } : {}) });
const messages = (e: PolicyEvaluator, annotation: string, over: Parameters<typeof input>[1] = {}): string[] =>
  e.evaluate(input(annotation, over)).findings.map((f) => `${f.rule}: ${renderError(f.error)}`);
const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';

t.test('findings carry path, type and reason only (no value key)', async (t) => {
  const r = engine('rules:\n  maxAttachments: {max: 0}').evaluate(input('a'));
  t.equal(r.findings.length, 1);
  t.same(Object.keys(r.findings[0]!.error).sort(), ['path', 'reason', 'type']);
});

t.test('requestedFields: users, groups, service accounts and their patterns', async (t) => {
  const e = engine(
    'rules:\n  requestedFields:\n    forbidden: [mac]\n    allowedSubjects: {users: [root], serviceAccounts: ["kube-system/*", "team-b/deployer"]}',
  );
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"}]';
  const who = (username: string | undefined, groups?: string[]) =>
    messages(e, ann, { userInfo: { ...(username !== undefined ? { username } : {}), ...(groups ? { groups } : {}) } });
  t.same(who('root'), [], 'an allowed user, without groups');
  t.same(who('system:serviceaccount:kube-system:replicaset-controller'), [], 'matches the first of two patterns');
  t.same(who('system:serviceaccount:team-b:deployer'), [], 'matches the second of two patterns');
  const denied = (user: string) => [
    `requestedFields: ${A}[0].mac: Forbidden: policy "p" (requestedFields): user "${user}" may not set mac`,
  ];
  t.same(who('system:serviceaccount:kube-system'), denied('system:serviceaccount:kube-system'), 'no account name: not a service account');
  t.same(who('system:serviceaccount::deployer'), denied('system:serviceaccount::deployer'), 'no namespace: not a service account');
  // 22 characters, like the prefix, then what a service account would have: still a plain user.
  t.same(who('xxxxxxxxxxxxxxxxxxxxxxkube-system:rc'), denied('xxxxxxxxxxxxxxxxxxxxxxkube-system:rc'), 'a user that only looks like one');
  t.same(
    who(undefined),
    [`requestedFields: ${A}[0].mac: Forbidden: policy "p" (requestedFields): this user may not set mac`],
    'no username',
  );
});

t.test('hardwareAddresses: several prefixes and ranges, range boundaries, ranges ignore Ethernet MACs', async (t) => {
  const prefixes = engine('rules:\n  hardwareAddresses:\n    macPrefixes: ["02:aa", "02:bb"]');
  t.same(messages(prefixes, '[{"name":"a","mac":"02:bb:00:00:00:01"}]'), [], 'the second prefix allows it');
  t.same(messages(prefixes, '[{"name":"a","mac":"02:cc:00:00:00:01"}]'), [
    `hardwareAddresses: ${A}[0].mac: Forbidden: policy "p" (hardwareAddresses): MAC 02:cc:00:00:00:01 does not start with an allowed prefix (02:aa, 02:bb)`,
  ]);
  const ranges = engine(
    'rules:\n  hardwareAddresses:\n    guidRanges: [{from: "00:00:00:00:00:00:01:00", to: "00:00:00:00:00:00:01:ff"}, {from: "00:00:00:00:00:00:03:00", to: "00:00:00:00:00:00:03:00"}]',
  );
  const guid = (g: string) => messages(ranges, JSON.stringify([{ name: 'ib', 'infiniband-guid': g }]));
  t.same(guid('00:00:00:00:00:00:01:00'), [], 'the lower bound is inside');
  t.same(guid('00:00:00:00:00:00:01:ff'), [], 'the upper bound is inside');
  t.same(guid('00:00:00:00:00:00:03:00'), [], 'a one-GUID second range');
  t.same(guid('00:00:00:00:00:00:00:ff'), [
    `hardwareAddresses: ${A}[0].infiniband-guid: Forbidden: policy "p" (hardwareAddresses): GUID 00:00:00:00:00:00:00:ff is outside the allowed ranges 00:00:00:00:00:00:01:00-00:00:00:00:00:00:01:ff, 00:00:00:00:00:00:03:00-00:00:00:00:00:00:03:00`,
  ]);
  t.same(guid('00:00:00:00:00:00:02:00').length, 1, 'between the ranges');
  t.same(messages(ranges, '[{"name":"a","mac":"02:00:00:00:00:01"}]'), [], 'GUID ranges do not apply to an Ethernet MAC');
});

t.test('uniqueAddresses: which pods are judged', async (t) => {
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'old', uid: 'u-old' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  const e = engine('rules:\n  uniqueAddresses: {mac: Network}', index);
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"}]';
  t.equal(messages(e, ann, { pod: { name: 'named' } }).length, 1, 'a name without a uid is judged');
  t.equal(messages(e, ann, { pod: { uid: 'u-only' } }).length, 1, 'a uid without a name is judged');
  t.same(messages(e, ann, { pod: { generateName: 'web-' } }), [], 'no identity yet: not judged');
  t.same(messages(e, '[{"name":"a","infiniband-guid":"00:00:00:00:00:00:00:09"}]'), [], 'a kind without a scope is not judged');
  index.setPod({ namespace: 'team-a', name: 'ib-old', uid: 'u-ib' }, [
    { kind: 'infiniband-guid', value: '00:00:00:00:00:00:00:09', network: 'team-a/ib' },
  ]);
  t.same(
    messages(e, '[{"name":"ib","infiniband-guid":"00:00:00:00:00:00:00:09"}]'),
    [],
    'a held GUID, with only mac uniqueness configured',
  );
});

t.test('uniqueAddresses: twins inside one request', async (t) => {
  const network = engine('rules:\n  uniqueAddresses: {mac: Network}');
  const cluster = engine('rules:\n  uniqueAddresses: {mac: Cluster}');
  const same = '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"a","mac":"02-00-00-00-00-01"}]';
  const otherNet = '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:01"}]';
  const differ = '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"a","mac":"02:00:00:00:00:02"}]';
  const twin = (scope: string) => [
    `uniqueAddresses: ${A}[1].mac: Forbidden: policy "p" (uniqueAddresses): MAC 02:00:00:00:00:01 is also requested at ${A}[0].mac (scope ${scope})`,
  ];
  t.same(messages(network, same), twin('Network'), 'same network');
  t.same(messages(network, otherNet), [], 'Network scope: another network may reuse it');
  t.same(messages(cluster, otherNet), twin('Cluster'), 'Cluster scope: not on another network either');
  t.same(messages(network, differ), [], 'different MACs');
  t.same(messages(cluster, differ), [], 'different MACs, Cluster scope');
  // A third copy names the first, in either scope: the first of each value is kept, not the last.
  const thrice = '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:01"}]';
  const atFirst = (i: number, at: number, scope: string) =>
    `uniqueAddresses: ${A}[${i}].mac: Forbidden: policy "p" (uniqueAddresses): MAC 02:00:00:00:00:01 is also requested at ${A}[${at}].mac (scope ${scope})`;
  t.same(messages(cluster, thrice), [atFirst(1, 0, 'Cluster'), atFirst(2, 0, 'Cluster')], 'Cluster: both copies name the first');
  t.same(messages(network, thrice), [atFirst(2, 1, 'Network')], 'Network: the first on that network');
  const fourTimes =
    '[{"name":"b","mac":"02:00:00:00:00:01"},{"name":"a","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:01"}]';
  t.same(
    messages(network, fourTimes),
    [atFirst(2, 0, 'Network'), atFirst(3, 0, 'Network')],
    'Network: the first on that network, not the last seen on it',
  );
});

t.test('uniqueAddresses: how the holder is described', async (t) => {
  const index = new AddressIndex({ now: () => 0 });
  index.setPod({ namespace: 'team-a', name: 'live', uid: 'u-live' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  index.reserve([
    {
      kind: 'mac',
      value: '02:00:00:00:00:02',
      scope: 'network:team-a/a',
      pod: { namespace: 'team-a', generateName: 'web-', uid: 'u-web' },
    },
  ]);
  index.reserve([{ kind: 'mac', value: '02:00:00:00:00:03', scope: 'cluster', pod: { namespace: 'team-a', name: 'anywhere' } }]);
  index.setPod({ namespace: 'team-b', name: 'theirs', uid: 'u-b' }, [{ kind: 'mac', value: '02:00:00:00:00:04', network: 'team-a/a' }]);
  const e = engine('rules:\n  uniqueAddresses: {mac: Network}', index);
  const used = (mac: string) => messages(e, JSON.stringify([{ name: 'a', mac }]));
  const msg = (mac: string, holder: string) => [
    `uniqueAddresses: ${A}[0].mac: Forbidden: policy "p" (uniqueAddresses): MAC ${mac} is already used by ${holder} (scope Network)`,
  ];
  t.same(used('02:00:00:00:00:01'), msg('02:00:00:00:00:01', 'pod team-a/live (running) on network team-a/a'));
  t.same(used('02:00:00:00:00:02'), msg('02:00:00:00:00:02', 'pod team-a/web-<generated> (being created) on network team-a/a'));
  t.same(used('02:00:00:00:00:03'), msg('02:00:00:00:00:03', 'pod team-a/anywhere (being created)'), 'a claim of no one network');
  t.same(used('02:00:00:00:00:04'), msg('02:00:00:00:00:04', 'a pod in another namespace (running) on network team-a/a'));
});

t.test('uniqueAddresses: a holder that is a pod of a sharing owner (a KubeVirt VM) is named by the owner', async (t) => {
  const vm = (namespace: string, name: string) => ({
    key: `vmi-${namespace}-${name}`,
    label: `VM ${namespace}/${name}`,
    namespace,
    kind: 'VirtualMachineInstance',
    name,
  });
  const index = new AddressIndex({ now: () => 0 });
  index.setPod({ namespace: 'team-a', name: 'virt-launcher-vm1-a', uid: 'u-1', owner: vm('team-a', 'vm1') }, [
    { kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' },
  ]);
  // A reservation of no one network (scope cluster) by a pod of a VM: no network to name.
  index.reserve([
    {
      kind: 'mac',
      value: '02:00:00:00:00:02',
      scope: 'cluster',
      pod: { namespace: 'team-a', name: 'virt-launcher-vm2-a', owner: vm('team-a', 'vm2') },
    },
  ]);
  // The VM of another namespace is not named, like a pod of another namespace.
  index.setPod({ namespace: 'team-b', name: 'virt-launcher-vm3-a', uid: 'u-3', owner: vm('team-b', 'vm3') }, [
    { kind: 'mac', value: '02:00:00:00:00:03', network: 'team-b/b' },
  ]);
  const e = engine('rules:\n  uniqueAddresses: {mac: Cluster}', index);
  const used = (mac: string) => messages(e, JSON.stringify([{ name: 'a', mac }]));
  const msg = (mac: string, holder: string) => [
    `uniqueAddresses: ${A}[0].mac: Forbidden: policy "p" (uniqueAddresses): MAC ${mac} is already used by ${holder} (scope Cluster)`,
  ];
  t.same(used('02:00:00:00:00:01'), msg('02:00:00:00:00:01', 'VM team-a/vm1 (a pod running) on network team-a/a'));
  t.same(used('02:00:00:00:00:02'), msg('02:00:00:00:00:02', 'VM team-a/vm2 (a pod being created)'));
  t.same(used('02:00:00:00:00:03'), msg('02:00:00:00:00:03', 'a pod in another namespace (a pod running) on network team-b/b'));
});

t.test('immutableNetworks: the finding on the annotation, with its reason', async (t) => {
  const e = engine('rules:\n  immutableNetworks: {action: Warn}');
  const r = e.evaluate(input('a', { operation: 'UPDATE', change: { heldBefore: new Set() } }));
  t.strictSame(r.findings, [
    {
      policy: 'p',
      rule: 'immutableNetworks',
      action: 'Warn',
      error: {
        path: A,
        type: 'Forbidden',
        reason: 'policy "p" (immutableNetworks): the networks of a running pod may not be changed (no NIC hotplug)',
      },
    },
  ]);
});
