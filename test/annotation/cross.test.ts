import t from 'tap';
import { MAX_PROBLEMS, parseDefaultNetwork, parseNetworks } from '../../src/annotation/index.js';
import { renderError } from '../../src/field/index.js';
import { expectProblems, type Expected } from './helpers.js';

const cases: Record<string, { value: string; errors?: Expected[]; warnings?: Expected[] }> = {
  'distinct explicit names': { value: '[{"name":"a","interface":"ib0"},{"name":"b","interface":"ib1"},{"name":"c"}]' },
  'explicit names must be unique': {
    value: '[{"name":"a","interface":"ib0"},{"name":"b","interface":"ib0"}]',
    errors: [['[1].interface', 'Duplicate value', 'element [0] already uses']],
  },
  'unique in the simple form too': { value: 'a@x,b@x', errors: [['[1].interface', 'Duplicate value', 'element [0]']] },
  'collision with the netN name of an unnamed attachment (JSON)': {
    value: '[{"name":"a","interface":"net2"},{"name":"b"}]',
    errors: [['[0].interface', 'Invalid value', 'name Multus gives element [1]']],
  },
  'collision with the netN name of an unnamed attachment (simple)': { value: 'a,b@net1', errors: [['[1].interface', 'Invalid value', 'element [0]']] },
  'netN of an element that names its own interface is free': { value: 'a@net2,b@net1' },
  'netN beyond the list is free': { value: 'a@net3,b' },
  'eth0 is the cluster network': { value: 'a@eth0', errors: [['[0].interface', 'Invalid value', 'eth0']] },
  'lo is the loopback': { value: '[{"name":"a","interface":"lo"}]', errors: [['[0].interface', 'Invalid value', 'loopback']] },
  'default-route on one element only (spec)': {
    value: '[{"name":"a","default-route":["10.0.0.1"]},{"name":"b","default-route":["fd00::1"]}]',
    errors: [['[1].default-route', 'Invalid value', 'element [0] already does']],
  },
  'the same host port twice': {
    value: '[{"name":"a","portMappings":[{"hostPort":80,"containerPort":80}]},{"name":"b","portMappings":[{"hostPort":80,"containerPort":81,"protocol":"tcp"},{"hostPort":80,"containerPort":81,"protocol":"UDP"}]}]',
    errors: [['[1].portMappings[0].hostPort', 'Duplicate value', 'already maps']],
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
  t.same(one.networks.map((n) => n.selection), [{ name: 'calico', namespace: 'kube-system' }]);
  t.equal(one.networks[0]?.path, `${base}[0]`);
  t.same(parseDefaultNetwork('[{"name":"x"}]', { defaultNamespace: 'multus' }).networks[0]?.selection, { name: 'x', namespace: 'multus' });
  t.same(parseDefaultNetwork('other/calico').networks[0]?.selection, { name: 'calico', namespace: 'other' });
  t.same(parseDefaultNetwork('').errors, [], 'empty: no override');
  for (const value of ['a,b', '[]', '[{"name":"a"},{"name":"b"}]']) {
    const r = parseDefaultNetwork(value);
    t.equal(r.errors.length, 1, value);
    t.match(renderError(r.errors[0]!), /^metadata\.annotations\[v1\.multus-cni\.io\/default-network\]: Invalid value: .*must select exactly one network/, value);
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
  t.same(simple.errors.map((e) => [e.type, e.value]), [['Too many', MAX_ELEMENTS + 5]]);
  const json = parseNetworks(JSON.stringify(Array.from({ length: MAX_ELEMENTS + 1 }, () => ({ name: 'a' }))), { namespace: 'ns' });
  t.equal(json.networks.length, MAX_ELEMENTS);
  t.same(json.errors.map((e) => [e.type, e.value]), [['Too many', MAX_ELEMENTS + 1]]);
});
