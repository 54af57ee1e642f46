// An explicit `interface` equal to the name Multus gives another element of the networks
// annotation. Multus names an element without `interface` `net<i>`, i its place among the
// delegates (the cluster network is 0, then the config's `defaultNetworks`, then the annotation's
// elements: multus.go getIfname), and before each delegate's ADD it fails if the pod already has
// a link of that name (DelegateAdd -> validateIfName: "interface name ... already exists").
// Delegates run in order, so the pod fails for certain when the earlier of the two elements
// creates its interface; when that chain is unknown (a KubeVirt binding element creates none) the
// annotation's own warning (src/annotation/cross.ts) stays.
import { multusAutoNumber, type ParsedNetwork } from '../annotation/index.js';
import { child, invalid, type FieldError } from '../field/index.js';
import { interfaceCreatorOf } from '../nads/mac-setters.js';
import type { CniSummary } from '../nads/index.js';

/** `--multus-default-networks`: a whole number (absent: 0, Multus's default); throws a RangeError naming the value. */
export function parseMultusDefaultNetworks(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d{1,3}$/.test(text)) throw new RangeError(`--multus-default-networks: invalid value ${JSON.stringify(text)}: a whole number, the length of defaultNetworks in Multus's config`);
  return Number(text);
}

/** The elements of one annotation, by the annotation's field path (the default network's element stands alone). */
function byAnnotation(networks: readonly ParsedNetwork[]): ParsedNetwork[][] {
  const groups = new Map<string, ParsedNetwork[]>();
  for (const n of networks) {
    const at = n.path.lastIndexOf('[');
    const key = at < 0 ? n.path : n.path.slice(0, at);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(n);
  }
  return [...groups.values()];
}

/**
 * Errors for explicit `netN` names that certainly collide with the name Multus gives another
 * element. `chainOf` answers an element's NAD chain (undefined when unknown or unreadable);
 * `defaultNetworks`: how many delegates Multus's config adds before the annotation's elements.
 */
export function interfaceNameCollisions(
  networks: readonly ParsedNetwork[],
  chainOf: (n: ParsedNetwork) => CniSummary | undefined,
  defaultNetworks: number,
): FieldError[] {
  const out: FieldError[] = [];
  // Most pods name no interface: no grouping on their review.
  if (!networks.some((n) => n.selection.interface !== undefined)) return out;
  for (const group of byAnnotation(networks)) {
    if (group.length < 2) continue;
    const atIndex = new Map(group.map((n) => [n.index, n]));
    for (const named of group) {
      const name = named.selection.interface;
      const number = typeof name === 'string' ? multusAutoNumber(name) : undefined;
      if (number === undefined) continue;
      const other = atIndex.get(number - 1 - defaultNetworks);
      if (!other || other === named || other.selection.interface !== undefined) continue;
      const [first, second] = named.index < other.index ? [named, other] : [other, named];
      const cni = chainOf(first);
      const creator = cni && interfaceCreatorOf(cni);
      if (!creator) continue;
      const { namespace: ns, name: nad } = first.selection;
      out.push(
        invalid(
          child(named.path, 'interface'),
          name,
          `Multus names element [${other.index}] "${name}" too (it sets no interface): element [${first.index}] runs first and ${creator.type} in ${ns}/${nad} creates "${name}", so Multus fails element [${second.index}]'s ADD ("interface name ${name} already exists"); name every interface, or none`,
        ),
      );
    }
  }
  return out;
}
