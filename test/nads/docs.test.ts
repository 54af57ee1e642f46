import t from 'tap';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { IPAM_FACTS, PLUGIN_FACTS } from '../../src/nads/index.js';

// That the page equals the generated table is test/scripts/gen.test.ts's (npm run gen).
t.test('docs/cni-runtime.md holds the table the checks use', async (t) => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/cni-runtime.md'), 'utf8');
  for (const type of [...PLUGIN_FACTS.keys(), ...IPAM_FACTS.keys()]) t.match(doc, `| \`${type}\` |`, `${type} has a row`);
});

t.test('every fact names the release and file it was read from', async (t) => {
  for (const [type, f] of [...PLUGIN_FACTS, ...IPAM_FACTS]) t.match(f.source, /\bv\d+\.\d+\.\d+ \S+\.go/, type);
});

// The rendered table shows anything but 'no' and 'one' as "several", so it cannot tell a wrong
// value from 'several'; the checks (reach.ts, admission/builtin.ts) compare the value itself.
t.test('each IPAM reads IP= from CNI_ARGS in one of the three documented ways', async (t) => {
  const want: Record<string, string> = {
    static: 'several', // a comma-separated list of CIDRs
    'host-local': 'one', // one address; two or more fail the ADD
    whereabouts: 'several',
    dhcp: 'no',
  };
  t.same(Object.fromEntries([...IPAM_FACTS].map(([type, f]) => [type, f.ipFromCniArgs])), want);
});
