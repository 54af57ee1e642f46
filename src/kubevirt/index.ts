// KubeVirt: the virt-launcher pod's networks as KubeVirt renders them from a VM (render.ts, pure),
// and KubeVirt's binding plugin registry (bindings.ts, pure; cluster.ts, its watch).
export {
  DEFAULT_NETWORK_ANNOTATION,
  hashedInterfaceName,
  hasMultusNetworks,
  launcherPodObject,
  NETWORKS_ANNOTATION,
  renderLauncher,
  vmPath,
  vmResourceOfKind,
  VM_RESOURCES,
  type RenderedLauncher,
  type SelectionSource,
} from './render.js';
export {
  BINDING_LIMITS,
  chooseRegistry,
  isKubeVirtObject,
  kubeVirtSummary,
  registryFromManifests,
  type BindingPlugin,
  type BindingPlugins,
  type BindingRegistry,
  type KubeVirtSummary,
} from './bindings.js';
export { ClusterBindingRegistry, KUBEVIRTS_PATH, type ClusterBindingRegistryOptions, type KubeVirtLogger } from './cluster.js';
