import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { parseSimpleItem } from '../../src/annotation/simple.js';
import { BASE, expectProblems, type Expected } from './helpers.js';

interface Case {
  value: string;
  /** `ns/name@if` per selection */
  want: string[];
  errors?: Expected[];
  warnings?: Expected[];
}

const sel = (r: ReturnType<typeof parseNetworks>): string[] =>
  r.networks.map((n) => `${n.selection.namespace}/${n.selection.name}${n.selection.interface ? `@${n.selection.interface}` : ''}`);

const cases: Record<string, Case> = {
  'one name': { value: 'net-a', want: ['pod-ns/net-a'] },
  'namespace, name and interface': { value: 'other/net-a@eth1', want: ['other/net-a@eth1'] },
  'whitespace around items, / and @ is trimmed': { value: ' other / net-a @ eth1 ,  net-b ', want: ['other/net-a@eth1', 'pod-ns/net-b'] },
  'duplicates are two attachments': { value: 'net-a,net-a', want: ['pod-ns/net-a', 'pod-ns/net-a'] },
  'tabs and newlines count as whitespace': { value: '\tnet-a,\nnet-b\n', want: ['pod-ns/net-a', 'pod-ns/net-b'] },
  'digits-only names are labels': { value: '123,4-5', want: ['pod-ns/123', 'pod-ns/4-5'] },
  'interface names follow the kernel, not DNS (the NAD client is stricter)': { value: 'a@Eth_1.100', want: ['pod-ns/a@Eth_1.100'] },
  'empty item between commas (Multus accepts it)': {
    value: 'net-a,,net-b',
    want: ['pod-ns/net-a', 'pod-ns/net-b'],
    errors: [['[1]', 'Invalid value', 'empty list item']],
  },
  'trailing comma (Multus accepts it)': { value: 'net-a,', want: ['pod-ns/net-a'], errors: [['[1]', 'Invalid value', 'empty list item']] },
  'empty namespace before / (Multus uses the default namespace): warning': {
    value: '/net-a',
    want: ['pod-ns/net-a'],
    warnings: [['[0].namespace', 'Invalid value', "empty namespace before '/': Multus uses the default namespace"]],
  },
  'empty name after /': { value: 'ns/', want: [], errors: [['[0].name', 'Required value', 'names no network']] },
  'empty interface after @ (Multus names it): warning': {
    value: 'net-a@',
    want: ['pod-ns/net-a'],
    warnings: [['[0].interface', 'Invalid value', "empty interface name after '@': Multus names the interface itself"]],
  },
  'more than one /': { value: 'a/b/c', want: [], errors: [['[0]', 'Invalid value', "more than one '/'"]] },
  'more than one @': { value: 'a@b@c', want: [], errors: [['[0]', 'Invalid value', "more than one '@'"]] },
  'upper case name': { value: 'Net-A', want: ['pod-ns/Net-A'], errors: [['[0].name', 'Invalid value', 'RFC 1123 label']] },
  'dotted name: Multus rejects it in the simple form': {
    value: 'net.a',
    want: ['pod-ns/net.a'],
    errors: [['[0].name', 'Invalid value', 'use the JSON form']],
  },
  'name ending in -': { value: 'net-', want: ['pod-ns/net-'], errors: [['[0].name', 'Invalid value', 'RFC 1123 label']] },
  // Multus's simple-form regex has no length limit; a NAD name may have 253 characters.
  'name of 64 characters (a valid NAD name)': { value: 'a'.repeat(64), want: [`pod-ns/${'a'.repeat(64)}`] },
  'name of 253 characters': { value: `${'a-'.repeat(126)}b`, want: [`pod-ns/${'a-'.repeat(126)}b`] },
  'name of 254 characters: no NAD can have it': {
    value: 'a'.repeat(254),
    want: [`pod-ns/${'a'.repeat(254)}`],
    errors: [['[0].name', 'Invalid value', 'no more than 253']],
  },
  'namespace of 64 characters: no namespace can have it': {
    value: `${'a'.repeat(64)}/n`,
    want: [`${'a'.repeat(64)}/n`],
    errors: [['[0].namespace', 'Invalid value', 'no more than 63']],
  },
  // Multus trims with Go's strings.TrimSpace: unicode.IsSpace, not JavaScript's trim().
  'NEL, NBSP and other Go spaces are trimmed': {
    value: '\u0085net-a\u00a0, ns\u2003/ net-b @\u3000eth1\u0085',
    want: ['pod-ns/net-a', 'ns/net-b@eth1'],
  },
  'a byte-order mark is not trimmed (Go keeps it)': {
    value: '\ufeffnet-a',
    want: ['pod-ns/\ufeffnet-a'],
    errors: [['[0].name', 'Invalid value', 'RFC 1123 label']],
  },
  'bad namespace': { value: 'Bad_NS/net-a', want: ['Bad_NS/net-a'], errors: [['[0].namespace', 'Invalid value', 'RFC 1123 label']] },
  'interface too long (16 bytes)': {
    value: 'a@abcdefghijklmnop',
    want: ['pod-ns/a'],
    errors: [['[0].interface', 'Invalid value', 'at most 15 bytes']],
  },
  'interface of 15 multi-byte characters is too long in bytes': {
    value: 'a@ééééééééé',
    want: ['pod-ns/a'],
    errors: [['[0].interface', 'Invalid value', 'at most 15 bytes']],
  },
  'interface with a colon': { value: 'a@eth0:1', want: ['pod-ns/a'], errors: [['[0].interface', 'Invalid value', "'/' or ':'"]] },
  'interface with inner whitespace': { value: 'a@my if', want: ['pod-ns/a'], errors: [['[0].interface', 'Invalid value', 'whitespace']] },
  'interface . and ..': {
    value: 'a@.,b@..',
    want: ['pod-ns/a', 'pod-ns/b'],
    errors: [
      ['[0].interface', 'Invalid value', '"." or ".."'],
      ['[1].interface', 'Invalid value', '"." or ".."'],
    ],
  },
  'every problem is reported, not only the first': {
    value: 'A,,b/c/d,e@',
    want: ['pod-ns/A', 'pod-ns/e'],
    errors: [
      ['[0].name', 'Invalid value', 'RFC 1123'],
      ['[1]', 'Invalid value', 'empty list item'],
      ['[2]', 'Invalid value', "more than one '/'"],
    ],
    warnings: [['[3].interface', 'Invalid value', "after '@'"]],
  },
};

t.test('simple form', async (t) => {
  for (const [name, c] of Object.entries(cases)) {
    const r = parseNetworks(c.value, { namespace: 'pod-ns' });
    t.equal(r.format, 'simple', `${name}: format`);
    t.same(sel(r), c.want, `${name}: selections`);
    expectProblems(t, r.errors, c.errors ?? [], `${name}: errors`);
    expectProblems(t, r.warnings, c.warnings ?? [], `${name}: warnings`);
  }
});

t.test('format detection follows Multus: any of [ { " means JSON; only "" means none', async (t) => {
  const formats: Array<[string, string]> = [
    ['', 'empty'],
    ['  \n\t', 'simple'],
    ['net-a', 'simple'],
    ['[]', 'json'],
    ['net-a"', 'json'],
    ['net{a', 'json'],
    ['a,b]', 'simple'], // ']' and '}' are not in Multus's set
  ];
  for (const [value, format] of formats) t.equal(parseNetworks(value, { namespace: 'x' }).format, format, JSON.stringify(value));
  const empty = parseNetworks('', { namespace: 'x' });
  t.same([empty.networks, empty.errors, empty.warnings], [[], [], []], 'empty: no attachments, no problems');
  // Multus returns "no networks" only for a zero-length value; a blank one is one item with an empty name.
  for (const blank of [' ', '\t\n', '\u00a0', ' \u0085 ']) {
    const r = parseNetworks(blank, { namespace: 'x' });
    t.same(r.networks, [], `${JSON.stringify(blank)}: no attachments`);
    t.same(
      r.errors.map((e) => [e.path, e.reason.startsWith('blank: Multus reads it as one network with an empty name')]),
      [[BASE, true]],
      `${JSON.stringify(blank)}: one error`,
    );
  }
  t.match(parseNetworks('net-a"', { namespace: 'x' }).errors[0]?.reason, /invalid JSON/);
});

t.test('paths: default, and a custom path for workload templates', async (t) => {
  const r = parseNetworks('net-a', { namespace: 'x' });
  t.equal(r.networks[0]?.path, `${BASE}[0]`);
  t.equal(r.networks[0]?.index, 0);
  const p = 'spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  const r2 = parseNetworks('Bad', { namespace: 'x', path: p });
  t.equal(r2.errors[0]?.path, `${p}[0].name`);
});

t.test('parseSimpleItem returns its index and path, and nothing selected for a bad item', async (t) => {
  const quiet = { error: () => undefined, warning: () => undefined };
  for (const raw of ['', ' ', 'a/b/c', 'a@b@c', 'ns/']) {
    t.same(
      parseSimpleItem(raw, 2, 'p', 'pod-ns', quiet),
      { index: 2, path: 'p[2]', selection: undefined, interface: undefined },
      JSON.stringify(raw),
    );
  }
  const ok = parseSimpleItem(' ns / a @ eth1 ', 1, 'p', 'pod-ns', quiet);
  t.same(ok, { index: 1, path: 'p[1]', selection: { name: 'a', namespace: 'ns', interface: 'eth1' }, interface: 'eth1' });
});

t.test('a selection without an interface has no interface key; empty parts are warned with the empty value', async (t) => {
  const r = parseNetworks('/net-a@', { namespace: 'pod-ns' });
  t.same(
    r.networks.map((n) => Object.keys(n.selection)),
    [['name', 'namespace']],
  );
  t.same(
    r.warnings.map((w) => [w.path, w.value]),
    [
      [`${BASE}[0].namespace`, ''],
      [`${BASE}[0].interface`, ''],
    ],
  );
  t.same(Object.keys(parseNetworks('net-a', { namespace: 'x' }).networks[0]!.selection), ['name', 'namespace']);
});
