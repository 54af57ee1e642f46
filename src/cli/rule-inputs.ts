// What `check` and `audit` both read before judging anything: policy files and NAD files. Any
// problem there stops the command (exit 2): without them it would be a different judgement.
import { readFile } from 'node:fs/promises';
import { DEFAULT_ADMISSION_CONFIG, type AdmissionConfig, parseMultusDefaultNetworks } from '../admission/index.js';
import { loadManifests, renderReadError } from '../check/index.js';
import { isNadObject, nadFromObject, parsePluginReads, type Nad } from '../nads/index.js';
import { loadPolicyDocuments, parseSharingOwners, policySet, type CompiledPolicy, type PolicySet } from '../policy/index.js';
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
export async function loadNadFiles(
  paths: readonly string[],
  io: CliIO,
  defaultNamespace: string,
  resourceNameKeys: readonly string[],
): Promise<Nad[] | number> {
  const objects = await loadNadObjects(paths, io);
  return typeof objects === 'number' ? objects : objects.map((o): Nad => nadFromObject(o, { defaultNamespace, resourceNameKeys }));
}

/**
 * The flags of `serve` that change a verdict, which `check` and `audit` take too (with the same
 * names and meaning): told the ones serve runs with, the three judge alike.
 */
export const VERDICT_OPTIONS = {
  'plugin-reads': { type: 'string', multiple: true },
  'address-sharing-owner': { type: 'string', multiple: true },
  'default-network-namespace': { type: 'string' },
  'resource-name-key': { type: 'string', multiple: true },
  'multus-default-networks': { type: 'string' },
} as const;

export const VERDICT_USAGE = `      --plugin-reads TYPE=KEYS  a CNI plugin or IPAM type that reads mac, ips or guid beyond
                         the built-in table (repeatable)
      --address-sharing-owner GROUP/KIND  controller owners whose pods share addresses
                         (repeatable; default kubevirt.io/VirtualMachineInstance)
      --default-network-namespace NS  namespace of unqualified default networks
                         (default kube-system)
      --resource-name-key KEY  another NAD annotation naming the device resource
                         (repeatable)
      --multus-default-networks N  defaultNetworks in Multus's config (unset: net<N> collisions warn)
                         (these five as serve's flags: give the ones serve runs with)
`;

export interface VerdictFlags {
  'plugin-reads'?: string[];
  'address-sharing-owner'?: string[];
  'default-network-namespace'?: string;
  'resource-name-key'?: string[];
  'multus-default-networks'?: string;
}

/** The admission config those flags give (as serve builds it), or a message naming the bad flag. */
export function configOfFlags(values: VerdictFlags): AdmissionConfig | string {
  let config: AdmissionConfig = DEFAULT_ADMISSION_CONFIG;
  try {
    if (values['plugin-reads']) config = { ...config, pluginReads: parsePluginReads(values['plugin-reads']) };
    if (values['address-sharing-owner']) config = { ...config, addressSharingOwners: parseSharingOwners(values['address-sharing-owner']) };
    const multusDefaultNetworks = parseMultusDefaultNetworks(values['multus-default-networks']);
    if (multusDefaultNetworks !== undefined) config = { ...config, multusDefaultNetworks };
  } catch (err) {
    return (err as Error).message;
  }
  const ns = values['default-network-namespace'];
  if (ns !== undefined) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns))
      return `--default-network-namespace: invalid value ${JSON.stringify(ns)}: must be a namespace name (RFC 1123 label)`;
    config = { ...config, defaultNetworkNamespace: ns };
  }
  const keys = values['resource-name-key'];
  if (keys) config = { ...config, resourceNameKeys: [...new Set([...DEFAULT_ADMISSION_CONFIG.resourceNameKeys, ...keys])] };
  return config;
}
