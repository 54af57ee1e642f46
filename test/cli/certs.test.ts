import t from 'tap';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { X509Certificate } from 'node:crypto';
import { run } from '../../src/cli/certs.js';
import type { CliIO } from '../../src/cli/io.js';

function io(cwd: string): CliIO & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (s) => out.push(s), stderr: (s) => err.push(s), stdin: Readable.from([]), env: {}, cwd };
}

t.test('writes the four files with private keys 0600 and prints the caBundle', async (t) => {
  const dir = t.testdir();
  const cli = io(dir);
  const code = await run(['--out', 'out', '--service', 'hook', '--namespace', 'ns', '--san', '127.0.0.1', '--days', '30'], cli);
  t.equal(code, 0, cli.err.join(''));
  const out = join(dir, 'out');
  for (const [name, mode] of [
    ['ca.crt', 0o644],
    ['ca.key', 0o600],
    ['tls.crt', 0o644],
    ['tls.key', 0o600],
  ] as const) {
    t.equal(statSync(join(out, name)).mode & 0o777, mode, name);
  }
  const caPem = readFileSync(join(out, 'ca.crt'), 'utf8');
  t.equal(cli.out.join('').trim(), Buffer.from(caPem).toString('base64'));
  const cert = new X509Certificate(readFileSync(join(out, 'tls.crt')));
  t.match(cert.subjectAltName, /DNS:hook\.ns\.svc,/);
  t.match(cert.subjectAltName, /IP Address:127\.0\.0\.1/);
  t.ok(cert.checkIssued(new X509Certificate(caPem)));
});

t.test('refuses to overwrite without --force; with --force reuses the CA unless --new-ca', async (t) => {
  const dir = t.testdir();
  t.equal(await run(['--out', dir], io(dir)), 0);
  const ca1 = readFileSync(join(dir, 'ca.crt'), 'utf8');
  const tls1 = readFileSync(join(dir, 'tls.crt'), 'utf8');
  const again = io(dir);
  t.equal(await run(['--out', dir], again), 2);
  t.match(again.err.join(''), /already exists; pass --force/);
  t.equal(await run(['--out', dir, '--force'], io(dir)), 0);
  t.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), ca1, 'same CA');
  t.not(readFileSync(join(dir, 'tls.crt'), 'utf8'), tls1, 'new serving certificate');
  t.equal(await run(['--out', dir, '--force', '--new-ca'], io(dir)), 0);
  t.not(readFileSync(join(dir, 'ca.crt'), 'utf8'), ca1, 'new CA');
});

t.test('usage errors exit 2 with the problem named', async (t) => {
  const dir = t.testdir();
  const cases: Array<[string[], RegExp]> = [
    [[], /--out DIR is required/],
    [['--out', 'x', '--days', 'ten'], /--days: invalid value "ten"/],
    [['--out', 'x', '--ca-days', '0'], /--ca-days: invalid value "0"/],
    [['--out', 'x', '--bogus'], /Unknown option '--bogus'/],
  ];
  for (const [argv, want] of cases) {
    const cli = io(dir);
    t.equal(await run(argv, cli), 2, argv.join(' '));
    t.match(cli.err.join(''), want);
  }
  const help = io(dir);
  t.equal(await run(['--help'], help), 0);
  t.match(help.out.join(''), /--san NAME\|IP/);
});

t.test('a broken CA in the output directory is reported, not crashed on', async (t) => {
  const dir = t.testdir({ 'ca.crt': 'junk', 'ca.key': 'junk' });
  const cli = io(dir);
  t.equal(await run(['--out', dir], cli), 2);
  t.match(cli.err.join(''), /netattach certs: /);
});
