// KubeVirt: the virt-launcher pod's networks as KubeVirt renders them from a VM (render.ts).
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
  type BindingPlugins,
  type RenderedLauncher,
  type SelectionSource,
} from './render.js';
