import t from 'tap';
import { gatewayConflicts, MAX_PROBLEMS, parseDefaultNetwork, parseNetworks } from '../../src/annotation/index.js';
import { renderError } from '../../src/field/index.js';
import { expectProblems, type Expected } from './helpers.js';

const cases: Record<string, { value: string; errors?: Expected[]; warnings?: Expected[] }> = {
  'distinct explicit names': { value: '[{"name":"a","interface":"ib0"},{"name":"b","interface":"ib1"},{"name":"c"}]' },
  'explicit names must be unique': {
    value: '[{"name":"a","interface":"ib0"},{"name":"b","interface":"ib0"}]',
    errors: [['[1].interface', 'Duplicate value', 'element [0] already uses']],
  },
  'unique in the simple form too': { value: 'a@x,b@x', errors: [['[1].interface', 'Duplicate value', 'element [0]']] },
  // A warning: the clash fails only if element [1]'s plugin creates an interface (a KubeVirt binding
  // element does not), and defaultNetworks in the Multus config shift the numbers.
  'collision with the netN name of an unnamed attachment (JSON): warning': {
    value: '[{"name":"a","interface":"net2"},{"name":"b"}]',
    warnings: [['[0].interface', 'Invalid value', 'may collide with net2, the name Multus gives element [1]']],
  },
  'collision with the netN name of an unnamed attachment (simple): warning': {
    value: 'a,b@net1',
    warnings: [['[1].interface', 'Invalid value', 'element [0]']],
  },
  'KubeVirt: a binding element (no interface) before an ordinal net1: warning, not a denial': {
    value:
      '[{"name":"my-binding","namespace":"default","cni-args":{"logicNetworkName":"default"}},{"name":"some-net","namespace":"default","interface":"net1"}]',
    warnings: [['[1].interface', 'Invalid value', 'KubeVirt binding element']],
  },
  'netN of an element that names its own interface is free': { value: 'a@net2,b@net1' },
  'netN beyond the list is free': { value: 'a@net3,b' },
  'eth0 is the cluster network': { value: 'a@eth0', errors: [['[0].interface', 'Invalid value', 'eth0']] },
  'lo is the loopback': { value: '[{"name":"a","interface":"lo"}]', errors: [['[0].interface', 'Invalid value', 'loopback']] },
  // Multus (CheckGatewayConfig): at most one IPv4 and one IPv6 gateway over all attachments.
  'default-route on two elements, different families: warning (the spec says one element; Multus runs it)': {
    value: '[{"name":"a","default-route":["10.0.0.1"]},{"name":"b","default-route":["fd00::1"]}]',
    warnings: [['[1].default-route', 'Invalid value', 'element [0] sets default-route too']],
  },
  'default-route: two IPv4 gateways on two elements (Multus: no ECMP)': {
    value:
      '[{"name":"a","default-route":["10.0.0.1"]},{"name":"b","default-route":["fd00::1","10.0.1.1"]},{"name":"c","default-route":["fd00::2"]}]',
    errors: [
      ['[1].default-route[1]', 'Invalid value', 'one IPv4 default-route gateway in total'],
      ['[2].default-route[0]', 'Invalid value', /one IPv6 .*\[1\]\.default-route\[0\] is one already/],
    ],
  },
  'default-route: an IPv4-mapped IPv6 gateway counts as IPv4 (Go To4)': {
    value: '[{"name":"a","default-route":["10.0.0.1"]},{"name":"b","default-route":["::ffff:10.0.0.2"]}]',
    errors: [['[1].default-route[0]', 'Invalid value', 'one IPv4 default-route gateway']],
  },
  'default-route: an empty list and a gateway: warning': {
    value: '[{"name":"a","default-route":[]},{"name":"b","default-route":["10.0.0.1"]}]',
    warnings: [
      ['[0].default-route', 'Invalid value', 'no gateway'],
      ['[1].default-route', 'Invalid value', 'element [0] sets default-route too'],
    ],
  },
  'the same host port twice: warning (each portmap has its own chain; the first rule wins)': {
    value:
      '[{"name":"a","portMappings":[{"hostPort":80,"containerPort":80}]},{"name":"b","portMappings":[{"hostPort":80,"containerPort":81,"protocol":"tcp"},{"hostPort":80,"containerPort":81,"protocol":"UDP"}]}]',
    warnings: [['[1].portMappings[0].hostPort', 'Duplicate value', 'already maps']],
  },
  'the same mac on two attachments: warning': {
    value: '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02-00-00-00-00-01"}]',
    warnings: [['[1].mac', 'Duplicate value', 'element [0]']],
  },
  'the same IP on two attachments: warning': {
    value: '[{"name":"a","ips":["10.0.0.1/24"]},{"name":"b","ips":["10.0.0.1"]}]',
    warnings: [['[1].ips', 'Duplicate value', 'element [0]']],
  },
};

t.test('cross-element rules', async (t) => {
  for (const [name, c] of Object.entries(cases)) {
    const r = parseNetworks(c.value, { namespace: 'ns' });
    expectProblems(t, r.errors, c.errors ?? [], `${name}: errors`);
    expectProblems(t, r.warnings, c.warnings ?? [], `${name}: warnings`);
  }
});

t.test('default-network: exactly one element, resolved in Multus namespace', async (t) => {
  const base = 'metadata.annotations[v1.multus-cni.io/default-network]';
  const one = parseDefaultNetwork('calico');
  t.same(
    one.networks.map((n) => n.selection),
    [{ name: 'calico', namespace: 'kube-system' }],
  );
  t.equal(one.networks[0]?.path, `${base}[0]`);
  t.same(parseDefaultNetwork('[{"name":"x"}]', { defaultNamespace: 'multus' }).networks[0]?.selection, { name: 'x', namespace: 'multus' });
  t.same(parseDefaultNetwork('other/calico').networks[0]?.selection, { name: 'calico', namespace: 'other' });
  // Multus parses the annotation whenever it is present: "" and a blank value fail the pod.
  t.match(
    parseDefaultNetwork('').errors.map((e) => [e.path, e.reason]),
    [[base, /^empty: Multus cannot parse it/]],
    'empty: an error',
  );
  for (const blank of [' ', '\t', '\u00a0']) {
    t.match(
      parseDefaultNetwork(blank).errors.map((e) => [e.path, e.reason]),
      [[base, /^blank: .*remove the annotation for no override/]],
      `${JSON.stringify(blank)}: an error`,
    );
  }
  for (const value of ['a,b', '[]', '[{"name":"a"},{"name":"b"}]']) {
    const r = parseDefaultNetwork(value);
    t.equal(r.errors.length, 1, value);
    t.match(
      renderError(r.errors[0]!),
      /^metadata\.annotations\[v1\.multus-cni\.io\/default-network\]: Invalid value: .*must select exactly one network/,
      value,
    );
  }
  const custom = parseDefaultNetwork('Bad', { path: 'spec.template.metadata.annotations[v1.multus-cni.io/default-network]' });
  t.equal(custom.errors[0]?.path, 'spec.template.metadata.annotations[v1.multus-cni.io/default-network][0].name');
});

t.test('problems are capped, with one entry saying how many were left out', async (t) => {
  const r = parseNetworks(','.repeat(500), { namespace: 'ns' });
  t.equal(r.errors.length, MAX_PROBLEMS + 1);
  const last = r.errors[r.errors.length - 1]!;
  t.equal(last.type, 'Too many');
  t.match(last.reason, /401 more errors not listed/);
});

t.test('elements beyond MAX_ELEMENTS are counted, not validated', async (t) => {
  const { MAX_ELEMENTS } = await import('../../src/annotation/index.js');
  const simple = parseNetworks(Array.from({ length: MAX_ELEMENTS + 5 }, () => 'a').join(','), { namespace: 'ns' });
  t.equal(simple.networks.length, MAX_ELEMENTS);
  t.same(
    simple.errors.map((e) => [e.type, e.value]),
    [['Too many', MAX_ELEMENTS + 5]],
  );
  const json = parseNetworks(JSON.stringify(Array.from({ length: MAX_ELEMENTS + 1 }, () => ({ name: 'a' }))), { namespace: 'ns' });
  t.equal(json.networks.length, MAX_ELEMENTS);
  t.same(
    json.errors.map((e) => [e.type, e.value]),
    [['Too many', MAX_ELEMENTS + 1]],
  );
});

t.test('default-network: its interface is eth0', async (t) => {
  const base = 'metadata.annotations[v1.multus-cni.io/default-network]';
  const eth0 = parseDefaultNetwork('calico@eth0');
  t.same([eth0.errors, eth0.warnings], [[], []], 'eth0 is its own name, not a collision');
  const other = parseDefaultNetwork('[{"name":"calico","interface":"eth1"}]');
  t.same(other.errors, []);
  t.match(
    other.warnings.map((w) => [w.path, w.reason]),
    [[`${base}[0].interface`, /not eth0; the container runtime expects eth0/]],
  );
  t.same(other.networks[0]?.selection.interface, 'eth1', 'kept: Multus uses it');
});

t.test('gatewayConflicts: Multus counts default-route gateways over both annotations', async (t) => {
  const nets = parseNetworks('[{"name":"a","default-route":["10.0.0.1","fd00::1"]},{"name":"b"}]', { namespace: 'ns' }).networks;
  const v4 = parseDefaultNetwork('[{"name":"calico","default-route":["::ffff:192.168.0.1"]}]').networks;
  const errors = gatewayConflicts(nets, v4);
  t.same(
    errors.map((e) => [e.path, e.value]),
    [['metadata.annotations[k8s.v1.cni.cncf.io/networks][0].default-route[0]', '10.0.0.1']],
    'the IPv4 gateway of the networks annotation conflicts with the (IPv4-mapped) one of the default network',
  );
  t.match(
    errors[0]?.reason,
    /over both annotations.*metadata\.annotations\[v1\.multus-cni\.io\/default-network\]\[0\]\.default-route\[0\] is one already/,
  );
  t.same(gatewayConflicts(nets, parseDefaultNetwork('calico').networks), [], 'no gateway on the default network: nothing');
  t.same(gatewayConflicts(parseNetworks('a', { namespace: 'ns' }).networks, v4), [], 'no gateway in the networks annotation: nothing');
});
