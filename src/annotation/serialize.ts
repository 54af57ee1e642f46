// Normalized selections back to annotation text, with the spec's keys in a fixed order.
import { SELECTION_KEYS } from './element.js';
import { setData } from './json-reader.js';
import type { NetworkSelection, ParsedNetwork } from './types.js';

function ordered(s: NetworkSelection): Record<string, unknown> {
  const src = s as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of SELECTION_KEYS) if (src[k] !== undefined) out[k] = src[k];
  for (const k of Object.keys(src)) {
    if (k.includes('.')) setData(out, k, src[k]);
  }
  return out;
}

/** The extended-form JSON of the selections (spec keys; `namespace` always present). */
export function serializeSelections(networks: ReadonlyArray<NetworkSelection | ParsedNetwork>, indent?: number): string {
  const list = networks.map((n) => ordered('selection' in n && 'index' in n ? (n as ParsedNetwork).selection : (n as NetworkSelection)));
  return JSON.stringify(list, null, indent);
}
