// The README's folder map is the front door's floor plan: a folder of src/ missing from it (as
// src/yaml was) is a room nobody is shown.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sameNames } from './same-names.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

t.test("the README's folder map names every folder of src/, and only those", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const named = new Set([...readme.matchAll(/^\|([^|]*)\|/gm)].flatMap((m) => [...m[1]!.matchAll(/`src\/([a-z-]+)`/g)].map((n) => n[1]!)));
  const folders = readdirSync(SRC).filter((f) => statSync(join(SRC, f)).isDirectory());
  sameNames(t, folders, named, {
    missing: 'folders of src/ the map leaves out',
    extra: 'folders the map names that src/ does not have',
  });
});
