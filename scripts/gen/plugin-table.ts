// The plugin table of docs/cni-runtime.md, rendered from src/nads/plugins.ts (its single source).
// Regenerate in place: npm run gen (scripts/gen.ts).
import { EMPTY_IPAM_RESULT_FAILS, IPAM_FACTS, PLUGIN_FACTS, type ArgType, type IpamFacts, type PluginFacts } from '../../src/nads/index.js';
import { replaceGenerated } from './blocks.js';

export const TABLE_BEGIN = '<!-- BEGIN GENERATED PLUGIN TABLE (scripts/gen/plugin-table.ts) -->';
export const TABLE_END = '<!-- END GENERATED PLUGIN TABLE -->';

const yes = (b: boolean | undefined): string => (b ? 'yes' : '–');
const list = (xs: readonly string[]): string => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '–');
const typed = (types: Readonly<Record<string, ArgType>> | undefined): string =>
  types
    ? ` (typed: ${Object.entries(types)
        .map(([k, t]) => `\`${k}\` ${t}`)
        .join(', ')}; another type fails the ADD)`
    : '';
const IFACE: Record<PluginFacts['iface'], string> = { creates: 'creates it', 'acts-on': 'acts on it', none: 'none' };
const IP_ARG: Record<IpamFacts['ipFromCniArgs'], string> = {
  no: '–',
  one: 'one address',
  several: 'several, comma-separated',
  first: 'the first (up to its first `/`)',
  'bare-unused': 'loaded as one address without /prefix, not used',
};

function pluginNotes(f: PluginFacts): string {
  return (
    [
      f.setsMacBy && `sets the MAC ${f.setsMacBy === 'create' ? 'when it creates the link' : 'on the existing link'}`,
      f.runtimeConfigMacWins && 'runtimeConfig `mac` beats args.cni',
      f.failsWithoutAddress && 'ADD fails when its IPAM returns no address',
      f.needsDevice && "needs the deviceID Multus finds in the pod's allocations",
      f.fromAnnotation && `its controller reads ${list(f.fromAnnotation)} from the networks annotation`,
      f.ipArgBare && 'loads IP= as one address without /prefix (anything else fails the ADD)',
    ]
      .filter(Boolean)
      .join('; ') || '–'
  );
}

export function renderPluginTable(): string {
  const plugins = [
    '| plugin | pod interface | MAC= from CNI_ARGS | runtimeConfig keys read (capability declared) | args.cni keys read | calls its IPAM | also | source |',
    '|---|---|---|---|---|---|---|---|',
    ...[...PLUGIN_FACTS].map(
      ([type, f]) =>
        `| \`${type}\` | ${IFACE[f.iface]} | ${yes(f.macFromCniArgs)} | ${list(f.runtimeConfig)} | ${list(f.argsCni)}${f.argsCniStringsOnly ? ' (strings only: any other value fails the ADD)' : ''}${typed(f.argsCniTypes)} | ${yes(f.delegatesIpam)} | ${pluginNotes(f)} | ${f.source} |`,
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
          f.ipFromCniArgs === 'first' && 'two or more addresses in IP= when the first has no /prefix',
          f.ipFromCniArgs === 'bare-unused' && 'an address with /prefix, or two or more, in IP=',
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
      return `| \`${type}\` | ${IP_ARG[f.ipFromCniArgs]} | ${yes(f.ipsFromRuntimeConfig)} | ${yes(f.ipsFromArgsCni)}${typed(f.argsCniTypes)} | ${roads} | ${fails} | ${f.unreserved === 'node' ? 'on its node only' : yes(f.unreserved)} | ${f.source} |`;
    }),
  ];
  return `${TABLE_BEGIN}\n${plugins.join('\n')}\n\n${ipams.join('\n')}\n${TABLE_END}`;
}

export const withPluginTable = (markdown: string): string => replaceGenerated(markdown, TABLE_BEGIN, TABLE_END, renderPluginTable());
