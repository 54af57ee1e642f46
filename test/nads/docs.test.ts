import t from 'tap';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { IPAM_FACTS, PLUGIN_FACTS } from '../../src/nads/index.js';

// That the page equals the generated table is test/scripts/gen.test.ts's (npm run gen).
t.test('docs/cni-runtime.md holds the table the checks use', async (t) => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/cni-runtime.md'), 'utf8');
  for (const type of [...PLUGIN_FACTS.keys(), ...IPAM_FACTS.keys()]) t.match(doc, `| \`${type}\` |`, `${type} has a row`);
});

// A release (v1.1.0-alpha counts), or a commit where a project has no release with the fact.
t.test('every fact names the release or commit and the file it was read from', async (t) => {
  for (const [type, f] of [...PLUGIN_FACTS, ...IPAM_FACTS])
    t.match(f.source, /\b(v\d+\.\d+\.\d+\S*|[0-9a-f]{8,40})( \(.*\))? \S+\.go/, type);
});

// The checks (reach.ts, admission/builtin-ipam.ts) compare the value itself: each is pinned here.
t.test('each IPAM reads IP= from CNI_ARGS in one of the documented ways', async (t) => {
  const want: Record<string, string> = {
    static: 'several', // a comma-separated list of CIDRs
    'host-local': 'one', // one address; two or more fail the ADD
    whereabouts: 'several',
    dhcp: 'no',
    spiderpool: 'bare-unused', // typed net.IP: one address without prefix, then unused
    'nv-ipam': 'first', // up to the first '/': the rest dropped
  };
  t.same(Object.fromEntries([...IPAM_FACTS].map(([type, f]) => [type, f.ipFromCniArgs])), want);
});
