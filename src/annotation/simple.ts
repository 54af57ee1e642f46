// The simple form: `[namespace/]name[@interface]`, comma-separated, whitespace around items and
// around `/` and `@` trimmed. Multus accepts empty items, `/name` and `name@`, and the pod then
// fails at start-up; we reject them here with a message instead.
import { child, index as at, invalid, required } from '../field/index.js';
import { dns1123LabelProblem, dns1123SubdomainProblem, interfaceNameProblem } from './formats.js';
import type { Collector } from './element.js';
import type { NetworkSelection } from './types.js';

export interface SimpleItem {
  index: number;
  path: string;
  selection: NetworkSelection | undefined;
  interface: string | undefined;
}

function nameProblem(name: string): string | undefined {
  const label = dns1123LabelProblem(name);
  if (!label) return undefined;
  if (!dns1123SubdomainProblem(name)) {
    return `${label}; Multus rejects '.' in the simple form: use the JSON form, [{"name": ${JSON.stringify(name)}}], for a dotted name`;
  }
  return label;
}

/** Parses one item (already split off at commas). */
export function parseSimpleItem(raw: string, i: number, base: string, namespace: string, out: Collector): SimpleItem {
  const path = at(base, i);
  const item = raw.trim();
  const none = { index: i, path, selection: undefined, interface: undefined };
  if (item === '') {
    out.error(invalid(path, raw, 'empty list item (look for a doubled or trailing comma); Multus would accept it and the pod would then fail to start'));
    return none;
  }
  const slashes = item.split('/');
  if (slashes.length > 2) {
    out.error(invalid(path, item, "must be [namespace/]name[@interface]: more than one '/'"));
    return none;
  }
  const rest = slashes.length === 2 ? slashes[1]! : slashes[0]!;
  const ats = rest.split('@');
  if (ats.length > 2) {
    out.error(invalid(path, item, "must be [namespace/]name[@interface]: more than one '@'"));
    return none;
  }
  const name = ats[0]!.trim();
  const ns = slashes.length === 2 ? slashes[0]!.trim() : undefined;
  const ifname = ats.length === 2 ? ats[1]!.trim() : undefined;

  let ok = true;
  if (ns !== undefined) {
    const problem = ns === '' ? "empty namespace before '/' (omit the '/' to use the default namespace)" : dns1123LabelProblem(ns);
    if (problem) out.error(ns === '' ? required(child(path, 'namespace'), problem) : invalid(child(path, 'namespace'), ns, problem));
  }
  if (name === '') {
    out.error(required(child(path, 'name'), `the item ${JSON.stringify(item)} names no network`));
    ok = false;
  } else {
    const problem = nameProblem(name);
    if (problem) out.error(invalid(child(path, 'name'), name, problem));
  }
  let validIf: string | undefined;
  if (ifname !== undefined) {
    const problem = ifname === '' ? "empty interface name after '@' (omit the '@' to let Multus name it)" : interfaceNameProblem(ifname);
    if (problem) out.error(ifname === '' ? required(child(path, 'interface'), problem) : invalid(child(path, 'interface'), ifname, problem));
    else validIf = ifname;
  }
  if (!ok) return none;
  const selection: NetworkSelection = { name, namespace: ns ? ns : namespace };
  if (validIf !== undefined) selection.interface = validIf;
  return { index: i, path, selection, interface: validIf };
}
