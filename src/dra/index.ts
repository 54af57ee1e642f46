// Public face of src/dra: what netattach knows of DRA (DeviceClasses, ResourceClaimTemplates) and
// which way each network's device is served.
export {
  RESOURCE_API,
  byScheduler,
  type DeviceClassInfo,
  type DeviceRequestAlternative,
  type DraView,
  type TemplateDevices,
  type TemplateLookup,
} from './types.js';
export { requiredResourceNames, templateDevices } from './selectors.js';
export { StaticDraView } from './static-view.js';
export { ClusterDeviceClasses, deviceClassInfo, type DraLogger } from './device-classes.js';
export { ClusterClaimTemplates, TEMPLATE_LIMITS } from './claim-templates.js';
export { devicePathOf, type DevicePath, type NetworkDevicePath } from './paths.js';
export { ClusterDra } from './cluster.js';
export { claimServes, deviceNamesOf, type Serves } from './claim-serving.js';
