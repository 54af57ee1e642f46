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
import { interfaceCreatorOf } from '../nads/index.js';
import type { CniSummary } from '../nads/index.js';

/**
 * `--multus-default-networks`: a whole number, or undefined when not given (the cluster's Multus
 * config is then unknown: collisions are warnings, see interfaceNameCollisions); throws a
 * RangeError naming the value.
 */
export function parseMultusDefaultNetworks(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,3}$/.test(text))
    throw new RangeError(
      `--multus-default-networks: invalid value ${JSON.stringify(text)}: a whole number, the length of defaultNetworks in Multus's config`,
    );
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

/** What the collision check found: errors when the cluster's Multus config is stated, else warnings. */
export interface InterfaceCollisions {
  errors: FieldError[];
  warnings: { path: string; text: string }[];
}

/**
 * Explicit `netN` names that collide with the name Multus gives another element.
 * `chainOf` answers an element's NAD chain (undefined when unknown or unreadable);
 * `defaultNetworks`: how many delegates Multus's config adds before the annotation's elements,
 * undefined when the operator did not state it. The failure is certain only when that number is
 * known: with other defaultNetworks the names shift and the same pod can work, so an unstated
 * count is read as Multus's default (none) and the collision is only a warning that says so.
 */
export function interfaceNameCollisions(
  networks: readonly ParsedNetwork[],
  chainOf: (n: ParsedNetwork) => CniSummary | undefined,
  defaultNetworks: number | undefined,
): InterfaceCollisions {
  const out: InterfaceCollisions = { errors: [], warnings: [] };
  const shift = defaultNetworks ?? 0;
  // Most pods name no interface: no grouping on their review.
  if (!networks.some((n) => n.selection.interface !== undefined)) return out;
  for (const group of byAnnotation(networks)) {
    if (group.length < 2) continue;
    const atIndex = new Map(group.map((n) => [n.index, n]));
    for (const named of group) {
      const name = named.selection.interface;
      const number = typeof name === 'string' ? multusAutoNumber(name) : undefined;
      if (number === undefined) continue;
      const other = atIndex.get(number - 1 - shift);
      if (!other || other === named || other.selection.interface !== undefined) continue;
      const [first, second] = named.index < other.index ? [named, other] : [other, named];
      const cni = chainOf(first);
      const creator = cni && interfaceCreatorOf(cni);
      if (!creator) continue;
      const { namespace: ns, name: nad } = first.selection;
      const why = `Multus names element [${other.index}] "${name}" too (it sets no interface): element [${first.index}] runs first and ${creator.type} in ${ns}/${nad} creates "${name}"`;
      const path = child(named.path, 'interface');
      if (defaultNetworks !== undefined) {
        out.errors.push(
          invalid(
            path,
            name,
            `${why}, so Multus fails element [${second.index}]'s ADD ("interface name ${name} already exists"); name every interface, or none`,
          ),
        );
      } else {
        out.warnings.push({
          path,
          text: `${JSON.stringify(name)}: ${why} when Multus's config has no defaultNetworks (its default), and then element [${second.index}]'s ADD is refused ("interface name ${name} already exists"); name every interface, or none (netattach denies this once --multus-default-networks states the count)`,
        });
      }
    }
  }
  return out;
}
