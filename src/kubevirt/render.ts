// KubeVirt's virt-launcher pod networks, rendered from a VM (VirtualMachine, VirtualMachineInstance,
// VirtualMachinePool, VirtualMachineInstanceReplicaSet) without KubeVirt: the annotations its
// controller writes on the launcher pod, and, for every rendered selection, the VM's own fields it
// came from. Pure: no I/O, untrusted JSON in.
//
// The facts, the same in KubeVirt v1.5.0 to v1.9.0 (https://github.com/kubevirt/kubevirt, read at
// each tag; between them the code was refactored, not changed in output):
// - pkg/network/pod/annotations/generator.go `Generate`: interfaces with `state: absent` are left
//   out, and the networks rendered are vmispec.FilterNetworksByInterfaces of the rest
//   (pkg/network/vmispec/network.go): in the order of `domain.devices.interfaces`, not of
//   `spec.networks`, and a network without an interface is not rendered. The networks annotation
//   is `multus.GenerateCNIAnnotation` of those; `v1.multus-cni.io/default-network` is the
//   `networkName` of the first of all networks whose `multus.default` is true, as written.
// - pkg/network/multus/annotation.go `GenerateCNIAnnotationFromNameScheme`: for each such network,
//   a secondary multus network (`multus` set, `default` not) gives one JSON selection
//   `{name, namespace, mac, interface}`: `mac` is the `macAddress` of the first interface of the
//   same name (omitted when empty), `interface` the hashed pod interface name; then, for any
//   network (the pod network too) whose interface has a `binding` plugin, the plugin is looked up
//   in the KubeVirt CR's `spec.configuration.network.binding`
//   (pkg/virt-config/virt-config.go `GetNetworkBindings`; v1.5.0 reads the same map through
//   pkg/network/netbinding `ReadNetBindingPluginConfiguration`): registered with a
//   `networkAttachmentDefinition`, a selection of that NAD with
//   `cni-args: {"logicNetworkName": <network name>}` follows; registered without one, nothing;
//   not registered, an error: pkg/virt-controller/services/template.go cannot render the launcher
//   pod, and pkg/virt-controller/watch/vmi/lifecycle.go retries it (FailedCreate) until the plugin
//   is registered. KubeVirt's VMI admission (pkg/network/admitter) does not check registration.
// - pkg/network/multus/nad.go `NetAttachDefNamespacedName`: `ns/name` splits at the first `/`;
//   a bare name takes the VMI's namespace, for a multus network and a binding plugin's NAD alike.
// - pkg/network/namescheme/networknamescheme.go `GenerateHashedInterfaceName`: `pod` + the first
//   11 hex digits of SHA-256 of the network's name (the ordinal `net1..` scheme is kept only for
//   a migration target whose source pod used it: never for a new launcher pod).
// - SR-IOV (`sriov: {}` interfaces) renders like any secondary multus network; the device comes
//   from the NAD's `k8s.v1.cni.cncf.io/resourceName`, which the Pod path injects.
// JSON keys come in the order of the NPWG client's NetworkSelectionElement struct (name,
// namespace, mac, interface, cni-args), as Go's json.Marshal writes them.
import { createHash } from 'node:crypto';
import type { BindingPlugins } from './bindings.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';

/** `group/resource` -> the JSON keys leading to the VMI spec, and whether the object is a template of many VMs. */
export const VM_RESOURCES: ReadonlyMap<string, { keys: readonly string[]; template: boolean; kind: string }> = new Map([
  ['kubevirt.io/virtualmachineinstances', { keys: ['spec'], template: false, kind: 'VirtualMachineInstance' }],
  ['kubevirt.io/virtualmachines', { keys: ['spec', 'template', 'spec'], template: false, kind: 'VirtualMachine' }],
  [
    'kubevirt.io/virtualmachineinstancereplicasets',
    { keys: ['spec', 'template', 'spec'], template: true, kind: 'VirtualMachineInstanceReplicaSet' },
  ],
  [
    'pool.kubevirt.io/virtualmachinepools',
    { keys: ['spec', 'virtualMachineTemplate', 'spec', 'template', 'spec'], template: true, kind: 'VirtualMachinePool' },
  ],
]);

/** The same table by `apiVersion` group and `kind`, for files (`netattach check`). */
export function vmResourceOfKind(apiVersion: string, kind: string): string | undefined {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  for (const [resource, v] of VM_RESOURCES) if (v.kind === kind && resource.startsWith(`${group}/`)) return resource;
  return undefined;
}

/** Where one rendered selection came from, as VM field paths. */
export interface SelectionSource {
  /** `...networks[k]` */
  networkPath: string;
  /** `...networks[k].multus.networkName` for a multus network; `...interfaces[j].binding.name` for a binding plugin's NAD. */
  namePath: string;
  /** `...domain.devices.interfaces[j]`, when an interface of the network's name exists. */
  interfacePath?: string;
  /** `...interfaces[j].macAddress`, when it was rendered to `mac`. */
  macPath?: string;
  kind: 'multus' | 'binding';
}

export interface RenderedLauncher {
  /** The launcher pod's network annotations (absent keys are not written by KubeVirt). */
  annotations: Record<string, string>;
  /** One per element of the networks annotation, in order. */
  selections: SelectionSource[];
  /** `...networks[k].multus.networkName` of the default network, when one is rendered. */
  defaultNetworkPath?: string;
  /** Field path of the VMI spec in the object (`spec`, `spec.template.spec`, ...). */
  specPath: string;
  /** What could not be rendered as KubeVirt would (an unknown binding plugin): said, never judged. */
  notes: { path: string; text: string }[];
}

export const hashedInterfaceName = (network: string): string => `pod${createHash('sha256').update(network).digest('hex').slice(0, 11)}`;

function nadName(namespace: string, full: string): { namespace: string; name: string } {
  const slash = full.indexOf('/');
  return slash < 0 ? { namespace, name: full } : { namespace: full.slice(0, slash), name: full.slice(slash + 1) };
}

/**
 * The launcher pod's annotations for the VMI spec at `keys` of `object`, in `namespace`.
 * `bindings` is KubeVirt's binding plugin registry when known; undefined: a binding interface is
 * noted, not rendered.
 */
export function renderLauncher(object: unknown, keys: readonly string[], namespace: string, bindings?: BindingPlugins): RenderedLauncher {
  const specPath = keys.join('.');
  const out: RenderedLauncher = { annotations: {}, selections: [], specPath, notes: [] };
  let spec: unknown = object;
  for (const k of keys) spec = isObject(spec) ? spec[k] : undefined;
  if (!isObject(spec) || !Array.isArray(spec['networks'])) return out;
  const networks = spec['networks'] as unknown[];
  const domain = isObject(spec['domain']) ? spec['domain'] : undefined;
  const devices = domain && isObject(domain['devices']) ? domain['devices'] : undefined;
  const interfaces = devices && Array.isArray(devices['interfaces']) ? (devices['interfaces'] as unknown[]) : [];
  const ifacePath = `${specPath}.domain.devices.interfaces`;
  // generator.go `Generate`: the interfaces not `state: absent`, and the networks of their names
  // (vmispec.FilterNetworksByInterfaces: in the order of the interfaces, the last network of a
  // name; a network without an interface is not rendered).
  const present = (i: unknown): i is Json => isObject(i) && i['state'] !== 'absent';
  const networkOf = new Map<string, number>(); // vmispec.IndexNetworkSpecByName: the last one wins
  networks.forEach((n, k) => {
    const name = isObject(n) ? str(n['name']) : undefined;
    if (name !== undefined) networkOf.set(name, k);
  });
  // vmispec.LookupInterfaceByName over the present interfaces: the first of that name.
  const firstPresent = new Map<string, number>();
  interfaces.forEach((i, j) => {
    const name = present(i) ? str(i['name']) : undefined;
    if (name !== undefined && !firstPresent.has(name)) firstPresent.set(name, j);
  });
  // The default network is read from every network, absent or not (generator.go).
  const k0 = networks.findIndex((n) => isObject(n) && isObject(n['multus']) && n['multus']['default'] === true);
  const dflt = k0 >= 0 ? (networks[k0] as Json)['multus'] : undefined;
  if (isObject(dflt) && typeof dflt['networkName'] === 'string') {
    out.annotations[DEFAULT_NETWORK_ANNOTATION] = dflt['networkName'];
    out.defaultNetworkPath = `${specPath}.networks[${k0}].multus.networkName`;
  }
  const elements: Json[] = [];
  for (const candidate of interfaces) {
    if (!present(candidate)) continue;
    const name = str(candidate['name']);
    const k = name === undefined ? undefined : networkOf.get(name);
    if (name === undefined || k === undefined) continue;
    const net = networks[k] as Json;
    const j = firstPresent.get(name)!;
    const iface = interfaces[j] as Json;
    const netPath = `${specPath}.networks[${k}]`;
    const multus = isObject(net['multus']) ? net['multus'] : undefined;
    if (multus && multus['default'] !== true) {
      const full = str(multus['networkName']) ?? '';
      const ref = nadName(namespace, full);
      const el: Json = { name: ref.name, namespace: ref.namespace };
      const source: SelectionSource = {
        networkPath: netPath,
        namePath: `${netPath}.multus.networkName`,
        interfacePath: `${ifacePath}[${j}]`,
        kind: 'multus',
      };
      const mac = str(iface['macAddress']);
      if (mac) {
        el['mac'] = mac;
        source.macPath = `${ifacePath}[${j}].macAddress`;
      }
      el['interface'] = hashedInterfaceName(name);
      elements.push(el);
      out.selections.push(source);
    }
    // annotation.go: any network whose interface names a binding plugin (the pod network too).
    const binding = isObject(iface['binding']) ? str(iface['binding']['name']) : undefined;
    if (binding === undefined) continue;
    const bindingPath = `${ifacePath}[${j}].binding.name`;
    // Own keys only: a plugin called "constructor" or "__proto__" is not Object.prototype's.
    const plugin = bindings && Object.hasOwn(bindings, binding) ? bindings[binding] : undefined;
    if (!bindings) {
      out.notes.push({
        path: bindingPath,
        text: `binding plugin "${binding}": its NetworkAttachmentDefinition (KubeVirt's configuration) is not known here, so its selection is not checked`,
      });
    } else if (!plugin) {
      // annotation.go newBindingPluginAnnotationData errs; virt-controller's pod rendering fails and
      // is retried (FailedCreate) until the plugin is registered: no launcher pod meanwhile. Not
      // final, and KubeVirt's own admission accepts the VM, so a warning, never a denial.
      out.notes.push({
        path: bindingPath,
        text: `binding plugin "${binding}" is not registered in KubeVirt's configuration (spec.configuration.network.binding): virt-controller makes no launcher pod until it is`,
      });
    } else if (plugin.networkAttachmentDefinition) {
      const ref = nadName(namespace, plugin.networkAttachmentDefinition);
      elements.push({ name: ref.name, namespace: ref.namespace, 'cni-args': { logicNetworkName: name } });
      out.selections.push({ networkPath: netPath, namePath: bindingPath, interfacePath: `${ifacePath}[${j}]`, kind: 'binding' });
    }
  }
  if (elements.length > 0) out.annotations[NETWORKS_ANNOTATION] = JSON.stringify(elements);
  return out;
}

/** Whether the VMI spec names a multus network (the webhook's matchCondition, in code). */
export const hasMultusNetworks = (r: RenderedLauncher): boolean => Object.keys(r.annotations).length > 0;

/**
 * A field path of the launcher pod (`metadata.annotations[k8s.v1.cni.cncf.io/networks][i].mac`)
 * as the VM's own (`spec.template.spec.domain.devices.interfaces[j].macAddress`); paths that are
 * not of the annotations come back unchanged.
 */
export function vmPath(path: string, r: RenderedLauncher): string {
  const nets = `metadata.annotations[${NETWORKS_ANNOTATION}]`;
  const dflt = `metadata.annotations[${DEFAULT_NETWORK_ANNOTATION}]`;
  if (path.startsWith(dflt)) return r.defaultNetworkPath ?? path;
  if (!path.startsWith(nets)) return path;
  const m = /^\[(\d+)\](.*)$/.exec(path.slice(nets.length));
  const s = m ? r.selections[Number(m[1])] : undefined;
  if (!m || !s) return `${r.specPath}.networks`;
  const rest = m[2]!;
  if (rest.startsWith('.mac') && s.macPath) return s.macPath;
  if (rest.startsWith('.interface')) return `${s.networkPath}.name`;
  if (rest.startsWith('.cni-args') && s.kind === 'binding') return s.namePath;
  return s.namePath;
}

/**
 * The virt-launcher pod KubeVirt's virt-controller makes for the VM, as far as netattach reads
 * it: `virt-launcher-<name>` (KubeVirt adds a random suffix), the network annotations, and the
 * controller ownerReference to the VMI of the VM's name (its uid when the object is the VMI), by
 * which its addresses are shared with the VM's other launcher pods (src/policy/owner.ts).
 */
export function launcherPodObject(object: unknown, keys: readonly string[], namespace: string, bindings?: BindingPlugins): Json {
  const meta = isObject(object) && isObject(object['metadata']) ? object['metadata'] : {};
  const name = str(meta['name']) ?? 'vm';
  const isVmi = isObject(object) && object['kind'] === 'VirtualMachineInstance';
  const uid = isVmi ? str(meta['uid']) : undefined;
  const rendered = renderLauncher(object, keys, namespace, bindings);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `virt-launcher-${name}`,
      namespace,
      annotations: rendered.annotations,
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name,
          ...(uid ? { uid } : {}),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { containers: [{ name: 'compute', image: 'virt-launcher' }] },
  };
}
