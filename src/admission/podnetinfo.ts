// The Downward API volume of network-resources-injector: the pod's labels and annotations as
// files, so that an application can read its network-status, and optionally each container's
// hugepages (hugepages.ts). Off unless configured.
import { index } from '../field/index.js';
import type { PodDraft } from './draft.js';
import { addContainerNameEnv, hugepageFiles, type HugepageFile } from './hugepages.js';
import { isObject, type JsonObject } from './object.js';
import type { AdmissionConfig } from './types.js';
import type { Note } from './warnings.js';

type PodNetInfo = AdmissionConfig['podNetInfo'];

const FIELDS = ['labels', 'annotations'] as const;

const volumeFor = (cfg: PodNetInfo, extra: readonly HugepageFile[]): JsonObject => ({
  name: cfg.volumeName,
  downwardAPI: { items: [...FIELDS.map((f) => ({ path: f, fieldRef: { fieldPath: `metadata.${f}` } })), ...extra] },
});

/** The same file: the apiserver may since have defaulted the divisor's spelling, so compare the rest. */
const sameFile = (item: unknown, f: HugepageFile): boolean => {
  const ref = isObject(item) ? item['resourceFieldRef'] : undefined;
  return isObject(ref) && ref['resource'] === f.resourceFieldRef.resource && ref['containerName'] === f.resourceFieldRef.containerName;
};

/**
 * Our volume with the hugepages files it lacks (another webhook may have added hugepages since the
 * first pass), or undefined when it has them all. A file of that path that says something else is
 * kept, with a warning.
 */
function withFiles(volume: JsonObject, files: readonly HugepageFile[], path: string, warnings: Note[]): JsonObject | undefined {
  const dapi = volume['downwardAPI'] as JsonObject;
  const items = dapi['items'] as unknown[];
  const missing: HugepageFile[] = [];
  for (const f of files) {
    const at = items.findIndex((i) => isObject(i) && i['path'] === f.path);
    if (at < 0) missing.push(f);
    else if (!sameFile(items[at], f))
      warnings.push({ path: `${path}.downwardAPI${index('.items', at)}`, text: `"${f.path}" exists: kept as it is` });
  }
  return missing.length === 0 ? undefined : { ...volume, downwardAPI: { ...dapi, items: [...items, ...missing] } };
}

/**
 * Ours when it is a Downward API volume exposing labels and annotations: the apiserver defaults
 * fields into it (defaultMode, fieldRef.apiVersion) before a reinvocation, so equality would fail.
 */
function isOurVolume(v: JsonObject): boolean {
  const items = isObject(v['downwardAPI']) ? v['downwardAPI']['items'] : undefined;
  if (!Array.isArray(items)) return false;
  const paths = new Set(items.map((i) => (isObject(i) && isObject(i['fieldRef']) ? i['fieldRef']['fieldPath'] : undefined)));
  return FIELDS.every((f) => paths.has(`metadata.${f}`));
}

/**
 * Adds the volume and a read-only mount in every container, skipping (with a warning) any clash;
 * with `cfg.hugepages`, the hugepages files and `CONTAINER_NAME` too.
 */
export function addPodNetInfo(draft: PodDraft, cfg: PodNetInfo, specPath = 'spec'): Note[] {
  const warnings: Note[] = [];
  if (!isObject(draft.pod['spec'])) return warnings;
  const hugepages = cfg.hugepages ? hugepageFiles(draft.pod['spec']['containers']) : [];
  const files = hugepages.flatMap((h) => h.files);
  // As NRI: the container learns its name even when the files cannot be added.
  warnings.push(...addContainerNameEnv(draft, hugepages, specPath));
  const spec = draft.pod['spec'];
  const volumesPath = `${specPath}.volumes`;
  const volumes = spec['volumes'] ?? [];
  if (!Array.isArray(volumes)) {
    warnings.push({ path: volumesPath, text: `not a list: volume "${cfg.volumeName}" not added` });
    return warnings;
  }
  const clash = volumes.findIndex((v) => isObject(v) && v['name'] === cfg.volumeName);
  if (clash >= 0 && !isOurVolume(volumes[clash] as JsonObject)) {
    warnings.push({ path: index(volumesPath, clash), text: `volume "${cfg.volumeName}" exists: pod network info not added` });
    return warnings;
  }
  if (clash < 0) draft.spec()!['volumes'] = [...volumes, volumeFor(cfg, files)];
  else {
    const updated = withFiles(volumes[clash] as JsonObject, files, index(volumesPath, clash), warnings);
    if (updated) draft.spec()!['volumes'] = volumes.map((v, i) => (i === clash ? updated : v));
  }

  const containers = spec['containers'];
  if (!Array.isArray(containers)) return warnings;
  containers.forEach((c, i) => {
    if (!isObject(c)) return;
    const mountsPath = `${index(`${specPath}.containers`, i)}.volumeMounts`;
    const mounts = c['volumeMounts'] ?? [];
    if (!Array.isArray(mounts)) {
      warnings.push({ path: mountsPath, text: `not a list: ${cfg.mountPath} not mounted` });
      return;
    }
    const same = mounts.findIndex((m) => isObject(m) && (m['name'] === cfg.volumeName || m['mountPath'] === cfg.mountPath));
    if (same >= 0) {
      const m = mounts[same] as JsonObject;
      if (m['name'] !== cfg.volumeName || m['mountPath'] !== cfg.mountPath) {
        warnings.push({ path: index(mountsPath, same), text: `clashes with the pod network info mount: ${cfg.mountPath} not mounted` });
      }
      return;
    }
    draft.container(i)['volumeMounts'] = [...mounts, { name: cfg.volumeName, mountPath: cfg.mountPath, readOnly: true }];
  });
  return warnings;
}
