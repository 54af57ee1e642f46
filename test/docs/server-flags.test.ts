// docs/server.md's table of `serve` flags against `netattach serve --help`: a flag the table leaves
// out (five were: --plugin-reads, --address-sharing-owner, --multus-default-networks,
// --immutable-networks, --no-dra) is one an admin reading the docs never learns of.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import t from 'tap';
import { run } from '../../src/cli/serve.js';
import { sameNames } from './same-names.js';

const doc = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');
// Every flag of a row's first cell (`--tls-cert FILE`, `--tls-key FILE` is one row).
const tableFlags = new Set([...doc.matchAll(/^\| (`--[^|]*)\|/gm)].flatMap((m) => [...m[1]!.matchAll(/--[a-z-]+/g)].map((f) => f[0])));

t.test("every flag of serve's help is in docs/server.md's table, and every flag there is serve's", async (t) => {
  let help = '';
  const code = await run(['--help'], { stdout: (s) => void (help += s), stderr: () => {}, stdin: Readable.from([]), env: {}, cwd: '.' });
  t.equal(code, 0);
  // Every flag of an option line's first column (up to two spaces), not those its text mentions.
  const helpFlags = [...help.matchAll(/^ {2}(-[^\n]*?)(?: {2}|$)/gm)]
    .flatMap((m) => [...m[1]!.matchAll(/--[a-z-]+/g)].map((f) => f[0]))
    .filter((f) => f !== '--help');
  t.ok(helpFlags.length > 20, `the help lists the flags (${helpFlags.length})`);
  sameNames(t, helpFlags, tableFlags, {
    missing: 'flags docs/server.md does not list',
    extra: 'flags docs/server.md lists that serve does not have',
  });
});
