// Reads the YAML under manifests/ for the manifest tests: every document of every file, and the
// objects of one kustomization directory (its resources, recursively, without rendering).
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MANIFESTS = join(ROOT, 'manifests');

// Manifests are untyped YAML; the tests walk them freely and assert on what they find.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export interface YamlDocument {
  file: string; // relative to the repository root
  index: number;
  errors: string[];
  value: unknown;
}

export function yamlFiles(dir = MANIFESTS): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...yamlFiles(path));
    else if (/\.ya?ml$/.test(name)) out.push(path);
  }
  return out;
}

export function readDocuments(path: string): YamlDocument[] {
  const file = relative(ROOT, path);
  return YAML.parseAllDocuments(readFileSync(path, 'utf8')).map((doc, index) => ({
    file,
    index,
    errors: [...doc.errors, ...doc.warnings].map((e) => e.message),
    value: doc.toJS({ maxAliasCount: 100 }) as unknown,
  }));
}

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The kustomization file of a directory, parsed. */
export function kustomization(dir: string): Obj {
  const doc = readDocuments(join(dir, 'kustomization.yaml'))[0];
  if (!doc || !isObj(doc.value)) throw new Error(`${dir}: no kustomization.yaml`);
  return doc.value;
}

/**
 * The objects a kustomization directory lists, following directory resources, before any
 * patch or transformer runs (so each object is as written in its file).
 */
export function kustomizeObjects(dir: string): Array<{ file: string; object: Obj }> {
  const out: Array<{ file: string; object: Obj }> = [];
  for (const entry of (kustomization(dir).resources ?? []) as string[]) {
    const path = join(dir, entry);
    if (existsSync(path) && statSync(path).isDirectory()) out.push(...kustomizeObjects(path));
    else for (const doc of readDocuments(path)) if (isObj(doc.value)) out.push({ file: doc.file, object: doc.value });
  }
  return out;
}

export const BASE = join(MANIFESTS, 'base');
export const SELF_SIGNED = join(MANIFESTS, 'overlays', 'self-signed');
export const CERT_MANAGER = join(MANIFESTS, 'overlays', 'cert-manager');

export function find(objects: Array<{ object: Obj }>, kind: string, name: string): Obj {
  const hit = objects.find((o) => o.object.kind === kind && o.object.metadata?.name === name);
  if (!hit) throw new Error(`no ${kind} ${name}`);
  return hit.object;
}
