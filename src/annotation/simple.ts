// The simple form: `[namespace/]name[@interface]`, comma-separated, whitespace (Go's set, as
// Multus trims with strings.TrimSpace) around items and around `/` and `@` trimmed. Multus accepts
// empty items, and the pod then fails at the NAD lookup: an error here. `/name` and `name@` run
// (the default namespace, an automatic interface name): warnings.
import { child, index as at, invalid, required } from '../field/index.js';
import { dns1123LabelProblem, dns1123SubdomainProblem, goTrimSpace, interfaceNameProblem, simpleNameProblem } from './formats.js';
import type { Collector } from './element.js';
import type { NetworkSelection } from './types.js';

export interface SimpleItem {
  index: number;
  path: string;
  selection: NetworkSelection | undefined;
  interface: string | undefined;
}

function nameProblem(name: string): string | undefined {
  const problem = simpleNameProblem(name);
  if (problem && name.includes('.') && !dns1123SubdomainProblem(name)) {
    return `${problem}; Multus rejects '.' in the simple form: use the JSON form, [{"name": ${JSON.stringify(name)}}], for a dotted name`;
  }
  return problem;
}

/** Parses one item (already split off at commas). */
export function parseSimpleItem(raw: string, i: number, base: string, namespace: string, out: Collector): SimpleItem {
  const path = at(base, i);
  const item = goTrimSpace(raw);
  const none = { index: i, path, selection: undefined, interface: undefined };
  if (item === '') {
    out.error(
      invalid(
        path,
        raw,
        'empty list item (look for a doubled or trailing comma); Multus would accept it and the pod would then fail to start',
      ),
    );
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
  const name = goTrimSpace(ats[0]!);
  const ns = slashes.length === 2 ? goTrimSpace(slashes[0]!) : undefined;
  const ifname = ats.length === 2 ? goTrimSpace(ats[1]!) : undefined;

  let ok = true;
  if (ns === '') {
    out.warning(
      invalid(child(path, 'namespace'), '', "empty namespace before '/': Multus uses the default namespace, as without the '/'; omit it"),
    );
  } else if (ns !== undefined) {
    const problem = dns1123LabelProblem(ns);
    if (problem) out.error(invalid(child(path, 'namespace'), ns, problem));
  }
  if (name === '') {
    out.error(required(child(path, 'name'), `the item ${JSON.stringify(item)} names no network`));
    ok = false;
  } else {
    const problem = nameProblem(name);
    if (problem) out.error(invalid(child(path, 'name'), name, problem));
  }
  let validIf: string | undefined;
  if (ifname === '') {
    out.warning(
      invalid(
        child(path, 'interface'),
        '',
        "empty interface name after '@': Multus names the interface itself, as without the '@'; omit it",
      ),
    );
  } else if (ifname !== undefined) {
    const problem = interfaceNameProblem(ifname);
    if (problem) out.error(invalid(child(path, 'interface'), ifname, problem));
    else validIf = ifname;
  }
  if (!ok) return none;
  const selection: NetworkSelection = { name, namespace: ns ? ns : namespace };
  if (validIf !== undefined) selection.interface = validIf;
  return { index: i, path, selection, interface: validIf };
}
