// The plugin table of docs/cni-runtime.md, rendered from src/nads/plugins.ts (its single source).
// Regenerate in place: npm run gen (scripts/gen.ts).
import { EMPTY_IPAM_RESULT_FAILS, IPAM_FACTS, PLUGIN_FACTS } from '../../src/nads/index.js';
import { replaceGenerated } from './blocks.js';

export const TABLE_BEGIN = '<!-- BEGIN GENERATED PLUGIN TABLE (scripts/gen/plugin-table.ts) -->';
export const TABLE_END = '<!-- END GENERATED PLUGIN TABLE -->';

const yes = (b: boolean | undefined): string => (b ? 'yes' : '–');
const list = (xs: readonly string[]): string => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '–');

export function renderPluginTable(): string {
  const plugins = [
    '| plugin | MAC= from CNI_ARGS | runtimeConfig keys read (capability declared) | args.cni keys read | calls its IPAM | source |',
    '|---|---|---|---|---|---|',
    ...[...PLUGIN_FACTS].map(
      ([type, f]) =>
        `| \`${type}\` | ${yes(f.macFromCniArgs)} | ${list(f.runtimeConfig)} | ${list(f.argsCni)}${f.argsCniStringsOnly ? ' (strings only: any other value fails the ADD)' : ''} | ${yes(f.delegatesIpam)} | ${f.source} |`,
    ),
  ];
  const ipams = [
    '| IPAM | IP= from CNI_ARGS | runtimeConfig `ips` | args.cni `ips` | several roads at once | ADD fails on | not reserved | source |',
    '|---|---|---|---|---|---|---|---|',
    ...[...IPAM_FACTS].map(([type, f]) => {
      const fails =
        [
          f.needsPrefix && 'an address without /prefix',
          f.ipFromCniArgs === 'one' && 'two or more addresses in IP=',
          f.needsInRange &&
            "an address outside its ranges or rangeStart..rangeEnd (by default the network and IPv4 broadcast addresses), or a range's gateway",
          f.combines === 'union' && 'two addresses in one range set',
          f.combines === 'replace' &&
            `nothing to assign (${[...EMPTY_IPAM_RESULT_FAILS.keys()].join(', ')}); an address assigned twice; two of a family below cniVersion 0.3.0; a route whose gateway no assigned address reaches`,
        ]
          .filter(Boolean)
          .join('; ') || '–';
      const roads =
        f.combines === 'union'
          ? 'all taken together'
          : f.combines === 'replace'
            ? 'runtimeConfig replaces args.cni, which replaces IP= and the configured addresses'
            : '–';
      return `| \`${type}\` | ${f.ipFromCniArgs === 'no' ? '–' : f.ipFromCniArgs === 'one' ? 'one address' : 'several, comma-separated'} | ${yes(f.ipsFromRuntimeConfig)} | ${yes(f.ipsFromArgsCni)} | ${roads} | ${fails} | ${yes(f.unreserved)} | ${f.source} |`;
    }),
  ];
  return `${TABLE_BEGIN}\n${plugins.join('\n')}\n\n${ipams.join('\n')}\n${TABLE_END}`;
}

export const withPluginTable = (markdown: string): string => replaceGenerated(markdown, TABLE_BEGIN, TABLE_END, renderPluginTable());
