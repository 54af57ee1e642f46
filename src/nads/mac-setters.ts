// Which requested MAC each plugin of a chain sets on the pod's interface, and whether it creates
// the interface at all. A selection can carry a MAC through two doors: the top-level `mac`
// (Multus sends it as `MAC=` in CNI_ARGS to every plugin, and as runtimeConfig `mac` to plugins
// declaring the capability) and `cni-args.mac` (merged into every plugin's `args.cni`). A plugin
// reading both keeps one, in an order fixed by its config loader, and the last plugin of the
// chain that sets a MAC decides what the interface ends up with. Facts executed with
// containernetworking/plugins v1.10.0 (docs/cni-runtime.md, "Two doors for one MAC").
import { CREATES_INTERFACE, PLUGIN_FACTS, RUNTIME_CONFIG_OVER_ARGS_CNI, type ExtraReaders } from './plugins.js';
import type { CniSummary, PluginSummary } from './types.js';

/** Where a selection's MAC comes from: the top-level `mac` or `cni-args.mac`. */
export type MacDoor = 'top' | 'args';

/** What one plugin does with the doors that carry a MAC: sets the one it keeps, sets none, or cannot be told. */
export type MacPick = MacDoor | 'none' | 'unknown';

export function macPickOf(p: PluginSummary, doors: { top: boolean; args: boolean }, extra: ExtraReaders): MacPick {
  if (extra.get(p.type)?.has('mac')) return 'unknown';
  const facts = PLUGIN_FACTS.get(p.type);
  if (!facts) return doors.top || doors.args ? 'unknown' : 'none';
  const declared = p.capabilities.includes('mac') && facts.runtimeConfig.includes('mac');
  const readsTop = doors.top && (facts.macFromCniArgs || declared || !!facts.fromAnnotation?.includes('mac'));
  const readsArgs = doors.args && facts.argsCni.includes('mac');
  if (readsArgs && !(declared && doors.top && RUNTIME_CONFIG_OVER_ARGS_CNI.has(p.type))) return 'args';
  return readsTop ? 'top' : 'none';
}

/** One plugin of the chain that sets a requested MAC, and the door it takes it from. */
export interface MacSetter {
  plugin: PluginSummary;
  door: MacDoor;
}

export interface MacSetting {
  /** Known plugins that set a requested MAC, in chain order. */
  setters: MacSetter[];
  /** The door whose MAC the interface ends up with, when the chain tells for certain. */
  effective?: MacDoor;
  /** Plugins that may set a MAC by ways the table does not know (unknown types, --plugin-reads). */
  unknown: string[];
}

/** How a chain treats the MACs a selection asks for through `doors`. */
export function macSettingOf(cni: CniSummary, doors: { top: boolean; args: boolean }, extra: ExtraReaders): MacSetting {
  const setters: MacSetter[] = [];
  const unknown: string[] = [];
  for (const p of cni.plugins) {
    const pick = macPickOf(p, doors, extra);
    if (pick === 'unknown') unknown.push(p.type);
    else if (pick !== 'none') setters.push({ plugin: p, door: pick });
  }
  const last = setters.at(-1);
  return { setters, unknown, ...(last && unknown.length === 0 ? { effective: last.door } : {}) };
}

/**
 * The plugin of the chain that creates the pod's interface, if the table knows one: once the chain
 * runs, a link of that name exists (or the ADD has failed anyway).
 */
export const interfaceCreatorOf = (cni: CniSummary): PluginSummary | undefined => cni.plugins.find((p) => CREATES_INTERFACE.has(p.type));
