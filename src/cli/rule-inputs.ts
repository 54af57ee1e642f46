// What `check` and `audit` both read before judging anything: policy files and NAD files. Any
// problem there stops the command (exit 2): without them it would be a different judgement.
import { readFile } from 'node:fs/promises';
import { loadManifests, renderReadError } from '../check/index.js';
import { isNadObject, nadFromObject, type Nad } from '../nads/index.js';
import { loadPolicyDocuments, policySet, type CompiledPolicy, type PolicySet } from '../policy/index.js';
import { EXIT_USAGE, type CliIO } from './io.js';

/** The policies of `--policy` files, or EXIT_USAGE after printing why not. */
export async function loadPolicyFiles(command: string, files: readonly string[], io: CliIO): Promise<PolicySet | number> {
  const fail = (message: string): number => (io.stderr(`netattach ${command}: ${message}\n`), EXIT_USAGE);
  const policies: CompiledPolicy[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      return fail(`cannot read policy file ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    const loaded = loadPolicyDocuments(text, file);
    if (loaded.errors.length > 0) {
      for (const err of loaded.errors) io.stderr(`netattach ${command}: ${err.message}\n`);
      return EXIT_USAGE;
    }
    policies.push(...loaded.policies);
  }
  const names = new Set<string>();
  for (const p of policies) {
    if (names.has(p.name)) return fail(`policy ${JSON.stringify(p.name)} is defined in more than one --policy file`);
    names.add(p.name);
  }
  return policySet(policies);
}

/** The NAD objects of `--nads` files or directories, or EXIT_USAGE after printing the read errors. */
export async function loadNadObjects(paths: readonly string[], io: CliIO): Promise<unknown[] | number> {
  const known = await loadManifests(paths, async () => '');
  if (known.errors.length > 0) {
    for (const e of known.errors) io.stderr(renderReadError({ ...e, message: `--nads: ${e.message}` }));
    return EXIT_USAGE;
  }
  return known.objects.map((m) => m.object).filter(isNadObject);
}

/** The NADs of `--nads` files or directories, or EXIT_USAGE after printing the read errors. */
export async function loadNadFiles(paths: readonly string[], io: CliIO, defaultNamespace: string, resourceNameKeys: readonly string[]): Promise<Nad[] | number> {
  const objects = await loadNadObjects(paths, io);
  return typeof objects === 'number' ? objects : objects.map((o): Nad => nadFromObject(o, { defaultNamespace, resourceNameKeys }));
}
