import t from 'tap';
import { Readable } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { run } from '../../src/cli/parse.js';
import type { CliIO } from '../../src/cli/io.js';

async function cli(argv: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    stdin: Readable.from([stdin]),
    env: {},
    cwd: process.cwd(),
  };
  const code = await run(argv, io);
  return { code, out, err };
}

t.test('valid value: normalized JSON array on stdout, exit 0', async (t) => {
  const r = await cli(['net-a,other/net-b@eth1']);
  t.equal(r.code, 0);
  t.same(JSON.parse(r.out), [
    { name: 'net-a', namespace: 'default' },
    { name: 'net-b', namespace: 'other', interface: 'eth1' },
  ]);
  t.equal(r.err, '');
});

t.test('spec keys in the output, namespace always present', async (t) => {
  const r = await cli([
    '--namespace',
    'team',
    '[{"name":"a","mac":"02:00:00:00:00:01","infiniband-guid":"c2:11:22:33:44:55:66:77","ips":["10.0.0.1/24"]}]',
  ]);
  t.equal(r.code, 0);
  t.same(JSON.parse(r.out), [
    { name: 'a', namespace: 'team', mac: '02:00:00:00:00:01', 'infiniband-guid': 'c2:11:22:33:44:55:66:77', ips: ['10.0.0.1/24'] },
  ]);
});

t.test('warnings go to stderr, exit stays 0', async (t) => {
  const r = await cli(['[{"name":"a","Mac":"03:00:00:00:00:01"}]']);
  t.equal(r.code, 0);
  const lines = r.err.trim().split('\n');
  t.equal(lines.length, 2);
  t.ok(
    lines.every((l) => l.startsWith('warning: metadata.annotations[k8s.v1.cni.cncf.io/networks][0].')),
    r.err,
  );
});

t.test('errors: one per line on stderr, nothing on stdout, exit 1', async (t) => {
  const r = await cli(['[{"name":"a","mac":"02:00"},{"name":"B"}]']);
  t.equal(r.code, 1);
  t.equal(r.out, '');
  t.same(r.err.trim().split('\n'), [
    'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac: Invalid value: "02:00": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms',
    "metadata.annotations[k8s.v1.cni.cncf.io/networks][1].name: Invalid value: \"B\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  ]);
});

t.test('- reads the value from stdin', async (t) => {
  const r = await cli(['-o', 'text', '-'], '[{"name":"a","interface":"ib0","ips":["10.0.0.1"]}]\n');
  t.equal(r.code, 0);
  t.equal(r.out, 'default/a@ib0 ips=10.0.0.1\n');
});

t.test('-- ends the options, so a value may start with -', async (t) => {
  const r = await cli(['--', '-net']);
  t.equal(r.code, 1);
  t.match(r.err, /\[0\]\.name: Invalid value: "-net"/);
  const ok = await cli(['-n', 'x', '--', 'net-a']);
  t.same(JSON.parse(ok.out), [{ name: 'net-a', namespace: 'x' }]);
});

t.test('--default-network: exactly one, Multus namespace by default', async (t) => {
  const r = await cli(['--default-network', 'calico']);
  t.equal(r.code, 0);
  t.same(JSON.parse(r.out), [{ name: 'calico', namespace: 'kube-system' }]);
  const ns = await cli(['-d', '-n', 'multus', 'calico']);
  t.same(JSON.parse(ns.out), [{ name: 'calico', namespace: 'multus' }]);
  const two = await cli(['-d', 'a,b']);
  t.equal(two.code, 1);
  t.match(two.err, /^metadata\.annotations\[v1\.multus-cni\.io\/default-network\]: Invalid value: "a,b": must select exactly one network/);
});

t.test('text output: one line per selection', async (t) => {
  const r = await cli([
    '--output',
    'text',
    '[{"name":"a","namespace":"n","mac":"02:00:00:00:00:01","portMappings":[{"hostPort":80,"containerPort":8080}]},{"name":"b"}]',
  ]);
  t.equal(r.code, 0);
  t.equal(r.out, 'n/a mac=02:00:00:00:00:01 portMappings=[{"hostPort":80,"containerPort":8080}]\ndefault/b\n');
});

t.test('empty value: no attachments', async (t) => {
  const r = await cli(['']);
  t.equal(r.code, 0);
  t.equal(r.out, '[]\n');
});

t.test('usage errors exit 2', async (t) => {
  for (const argv of [[], ['a', 'b'], ['--bogus', 'a'], ['--output', 'yaml', 'a'], ['--namespace'], ['--namespace', '', 'a']]) {
    const r = await cli(argv);
    t.equal(r.code, 2, JSON.stringify(argv));
    t.equal(r.out, '', JSON.stringify(argv));
    t.ok(r.err.length > 0, JSON.stringify(argv));
  }
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.out, /^Usage: netattach parse/);
});

t.test('as a real process: node --import tsx src/cli/main.ts parse', async (t) => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const exec = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'parse', ...args], {
      cwd: root,
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
  const ok = exec(['-'], 'net-a@eth1\n');
  t.equal(ok.status, 0, ok.stderr);
  t.same(JSON.parse(ok.stdout), [{ name: 'net-a', namespace: 'default', interface: 'eth1' }]);
  const bad = exec(['--', 'a,,b']);
  t.equal(bad.status, 1);
  t.match(bad.stderr, /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[1\]: Invalid value: "": empty list item/);
  const usage = exec([]);
  t.equal(usage.status, 2);
});
