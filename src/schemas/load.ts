// The JSON Schemas in the repository's `schemas/` folder are the single source of truth
// for validation, docs and CRD schemas. Code runs both from `src/` (tsx, tests) and from
// `dist/src/` (built), so the folder is found by walking up rather than by a fixed offset.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';

let schemasDir: string | undefined;

export function schemasDirectory(): string {
  if (schemasDir) return schemasDir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'schemas');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return (schemasDir = candidate);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('netattach: cannot find the schemas/ directory above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** Reads `schemas/<file>` as JSON. */
export function loadSchema(file: string): Record<string, unknown> {
  // The single executable (scripts/build-plugin.ts) carries the schemas as assets: no folder beside it.
  if (isSea()) return JSON.parse(getAsset(`schemas/${file}`, 'utf8')) as Record<string, unknown>;
  return JSON.parse(readFileSync(join(schemasDirectory(), file), 'utf8')) as Record<string, unknown>;
}
