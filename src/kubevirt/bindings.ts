// KubeVirt's registry of network binding plugins: `spec.configuration.network.binding` of the
// KubeVirt CR (kubevirt.io/v1 KubeVirt), which virt-controller reads when it renders a launcher
// pod (src/kubevirt/render.ts). Pure: what is kept of one KubeVirt object, within bounds, and which
// object's registry KubeVirt uses. The cluster watch is cluster.ts.
//
// Which object (KubeVirt v1.5.0 to v1.9.0, pkg/virt-config/configuration.go
// `GetConfigFromKubeVirtCR`): virt-controller watches KubeVirt objects in every namespace
// (pkg/controller/virtinformers.go `KubeVirt()`) and uses one that is not being deleted and has a
// `status.phase` (virt-operator sets it once it deploys it), read from KubeVirt's own namespace.
// virt-operator's webhook refuses a second KubeVirt object while one exists
// (pkg/virt-operator/webhooks/kubevirt-create-admitter.go), so there is one. Netattach does not
// know KubeVirt's namespace: when several such objects exist and their registries differ, the
// registry is unknown here (never guessed).

/** What netattach reads of one registered plugin: the NAD its selection names, if any. */
export interface BindingPlugin {
  networkAttachmentDefinition?: string;
}

/** Plugin name -> its registration (own keys only: read with Object.hasOwn). */
export type BindingPlugins = Readonly<Record<string, BindingPlugin>>;

/**
 * Bounds on what is kept of KubeVirt objects. KubeVirt ships a handful of plugins (passt,
 * managedtap, slirp, macvtap, the sidecar example) and allows one KubeVirt object; an object past
 * a per-object bound has an unknown registry (the binding interfaces keep the "not checked" note:
 * nothing is denied for it), and past the total bound the registry is unknown for all.
 */
export const BINDING_LIMITS = {
  /** Plugins kept per KubeVirt object. */
  pluginsPerObject: 64,
  /** Characters of a plugin name (a map key; KubeVirt sets no limit). */
  pluginName: 253,
  /** Characters of `networkAttachmentDefinition`: a namespace (63), `/`, a name (253). */
  nadReference: 317,
  /** KubeVirt objects kept, all namespaces together. */
  objects: 16,
  /** Names of KubeVirt objects past `objects` remembered, so that their removal is seen. */
  droppedNames: 1_024,
} as const;

/** What is kept of one KubeVirt object. */
export interface KubeVirtSummary {
  namespace: string;
  name: string;
  /** Not being deleted and with a `status.phase`: the objects virt-controller may use. */
  deployed: boolean;
  /** The registry; undefined when `problem` says why it is not kept. */
  plugins?: BindingPlugins;
  problem?: string;
}

export type BindingRegistry =
  | { known: true; plugins: BindingPlugins /** `namespace/name` of the KubeVirt object(s) read. */; from: string }
  | { known: false; reason: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `o` is a KubeVirt CR (kubevirt.io, kind KubeVirt). */
export const isKubeVirtObject = (o: unknown): o is Json =>
  isObject(o) && o['kind'] === 'KubeVirt' && typeof o['apiVersion'] === 'string' && o['apiVersion'].startsWith('kubevirt.io/');

/**
 * The summary of a KubeVirt object, or undefined when it has no name. `manifest`: an object from a
 * file (`netattach check`), which is what will be applied: deployed unless deleted, whatever its
 * status says.
 */
export function kubeVirtSummary(o: unknown, options: { manifest?: boolean; defaultNamespace?: string } = {}): KubeVirtSummary | undefined {
  if (!isObject(o)) return undefined;
  const meta = isObject(o['metadata']) ? o['metadata'] : {};
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const namespace = typeof meta['namespace'] === 'string' ? meta['namespace'] : (options.defaultNamespace ?? '');
  if (name === '' || name.length > 253 || namespace.length > 63) return undefined;
  const status = isObject(o['status']) ? o['status'] : {};
  const deleting = meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null;
  const phase = typeof status['phase'] === 'string' && status['phase'] !== '';
  const deployed = !deleting && (options.manifest === true || phase);
  const read = registryOf(o);
  return { namespace, name, deployed, ...read };
}

function registryOf(o: Json): { plugins: BindingPlugins } | { problem: string } {
  const spec = isObject(o['spec']) ? o['spec'] : {};
  const configuration = isObject(spec['configuration']) ? spec['configuration'] : {};
  const network = isObject(configuration['network']) ? configuration['network'] : {};
  const binding = network['binding'];
  if (binding === undefined || binding === null) return { plugins: {} };
  if (!isObject(binding)) return { problem: 'spec.configuration.network.binding is not a map' };
  const entries: Array<[string, BindingPlugin]> = [];
  for (const key in binding) {
    if (!Object.hasOwn(binding, key)) continue;
    if (entries.length === BINDING_LIMITS.pluginsPerObject)
      return { problem: `more than ${BINDING_LIMITS.pluginsPerObject} binding plugins (netattach keeps at most that many)` };
    if (key.length > BINDING_LIMITS.pluginName)
      return { problem: `a binding plugin name of ${key.length} characters (netattach keeps at most ${BINDING_LIMITS.pluginName})` };
    const value = binding[key];
    const nad = isObject(value) ? value['networkAttachmentDefinition'] : undefined;
    if (nad !== undefined && typeof nad !== 'string')
      return { problem: `binding plugin "${key}": networkAttachmentDefinition is not a string` };
    if (nad !== undefined && nad.length > BINDING_LIMITS.nadReference)
      return { problem: `binding plugin "${key}": a networkAttachmentDefinition of ${nad.length} characters` };
    entries.push([key, nad ? { networkAttachmentDefinition: nad } : {}]);
  }
  // fromEntries defines own properties: a plugin called "__proto__" stays a plugin.
  return { plugins: Object.freeze(Object.fromEntries(entries)) };
}

const registryText = (p: BindingPlugins): string =>
  JSON.stringify(
    Object.keys(p)
      .sort()
      .map((k) => [k, p[k]!.networkAttachmentDefinition ?? '']),
  );

/**
 * The registry virt-controller uses, from every KubeVirt object kept; `overflow`: objects exist
 * that were not kept past this many (`BINDING_LIMITS.objects`).
 */
export function chooseRegistry(objects: Iterable<KubeVirtSummary>, overflow?: number): BindingRegistry {
  if (overflow !== undefined) return { known: false, reason: `more than ${overflow} KubeVirt objects (netattach keeps at most that many)` };
  const deployed = [...objects].filter((o) => o.deployed).sort((a, b) => key(a).localeCompare(key(b)));
  if (deployed.length === 0) return { known: false, reason: 'no deployed KubeVirt object (kubevirt.io/v1 KubeVirt with a status.phase)' };
  const broken = deployed.find((o) => o.plugins === undefined);
  if (broken) return { known: false, reason: `KubeVirt ${key(broken)}: ${broken.problem}` };
  const texts = new Set(deployed.map((o) => registryText(o.plugins!)));
  if (texts.size > 1)
    return {
      known: false,
      reason: `${deployed.length} deployed KubeVirt objects with different binding plugins (${deployed.slice(0, 4).map(key).join(', ')}); KubeVirt uses the one in its own namespace`,
    };
  return { known: true, plugins: deployed[0]!.plugins!, from: deployed.map(key).join(', ') };
}

const key = (o: KubeVirtSummary): string => `${o.namespace}/${o.name}`;

/** The registry of the KubeVirt objects among manifests (`netattach check`); undefined when there is none. */
export function registryFromManifests(objects: readonly unknown[], defaultNamespace: string): BindingRegistry | undefined {
  const found: KubeVirtSummary[] = [];
  for (const o of objects) {
    if (!isKubeVirtObject(o)) continue;
    const s = kubeVirtSummary(o, { manifest: true, defaultNamespace });
    if (s) found.push(s);
    if (found.length > BINDING_LIMITS.objects) return chooseRegistry([], BINDING_LIMITS.objects);
  }
  return found.length === 0 ? undefined : chooseRegistry(found);
}
