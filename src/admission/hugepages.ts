// The hugepages Downward API of network-resources-injector (`-injectHugepageDownApi`): for every
// container with non-zero hugepages requests or limits, files `hugepages_<size>_request_<name>` and
// `hugepages_<size>_limit_<name>` (MiB) in the podnetinfo volume, and `CONTAINER_NAME=<name>` in
// that container, so DPDK helper libraries can find their own hugepages. File names, fields and
// the env var are NRI v1.9.0's (pkg/webhook/webhook.go, processHugepagesForDownwardAPI).
import { index } from '../field/index.js';
import type { PodDraft } from './draft.js';
import { isObject, type JsonObject } from './object.js';
import { quantityValue } from './quantity.js';
import type { Note } from './warnings.js';

export const CONTAINER_NAME_ENV = 'CONTAINER_NAME';
const HUGEPAGES = /^hugepages-(.+)$/;

/** One Downward API file: a container's hugepages request or limit, in MiB. */
export interface HugepageFile {
  path: string;
  resourceFieldRef: { containerName: string; resource: string; divisor: '1Mi' };
}

/** Non-zero: what NRI's `!quantity.IsZero()` keeps. A value that is no quantity is not ours to judge. */
const nonZero = (q: unknown): boolean => {
  const v = quantityValue(q);
  return v !== undefined && v > 0;
};

/**
 * The files for each container with hugepages, requests before limits, in the order the keys
 * appear. The size drops every `i` as NRI does (`1Gi` -> `1G`, `2Mi` -> `2M`).
 */
export function hugepageFiles(containers: unknown): Array<{ container: number; name: string; files: HugepageFile[] }> {
  if (!Array.isArray(containers)) return [];
  const out: Array<{ container: number; name: string; files: HugepageFile[] }> = [];
  containers.forEach((c, i) => {
    if (!isObject(c) || typeof c['name'] !== 'string' || !isObject(c['resources'])) return;
    const name = c['name'];
    const files: HugepageFile[] = [];
    for (const [kind, file] of [
      ['requests', 'request'],
      ['limits', 'limit'],
    ] as const) {
      const list = c['resources'][kind];
      if (!isObject(list)) continue;
      for (const [resource, quantity] of Object.entries(list)) {
        const m = HUGEPAGES.exec(resource);
        if (!m || !nonZero(quantity)) continue;
        files.push({
          path: `hugepages_${m[1]!.replaceAll('i', '')}_${file}_${name}`,
          resourceFieldRef: { containerName: name, resource: `${kind}.${resource}`, divisor: '1Mi' },
        });
      }
    }
    if (files.length > 0) out.push({ container: i, name, files });
  });
  return out;
}

/**
 * `CONTAINER_NAME=<name>` in each container with hugepages. An existing variable of that name is
 * kept as it is, with a warning when it says something else (the files are named for `name`).
 */
export function addContainerNameEnv(
  draft: PodDraft,
  containers: ReadonlyArray<{ container: number; name: string }>,
  specPath = 'spec',
): Note[] {
  const warnings: Note[] = [];
  const list = draft.pod['spec'] && isObject(draft.pod['spec']) ? draft.pod['spec']['containers'] : undefined;
  if (!Array.isArray(list)) return warnings;
  for (const { container: i, name } of containers) {
    const c = list[i] as JsonObject;
    const envPath = `${index(`${specPath}.containers`, i)}.env`;
    const env = c['env'] ?? [];
    if (!Array.isArray(env)) {
      warnings.push({ path: envPath, text: `not a list: ${CONTAINER_NAME_ENV} not added` });
      continue;
    }
    const at = env.findIndex((e) => isObject(e) && e['name'] === CONTAINER_NAME_ENV);
    if (at >= 0) {
      const e = env[at] as JsonObject;
      if (e['value'] !== name) {
        warnings.push({ path: index(envPath, at), text: `${CONTAINER_NAME_ENV} is kept, but the hugepages files are named for "${name}"` });
      }
      continue;
    }
    draft.container(i)['env'] = [...env, { name: CONTAINER_NAME_ENV, value: name }];
  }
  return warnings;
}
