// Public face of src/nads: the NAD model, CNI config analysis, NAD validation and NAD sources.
export type { Capability, CniSummary, IpamRoute, IpamSummary, IpRange, Nad, NadLookup, NadSource, PluginSummary } from './types.js';
export {
  PLUGIN_FACTS,
  IPAM_FACTS,
  EMPTY_IPAM_RESULT_FAILS,
  CREATES_INTERFACE,
  SETS_MAC_BY,
  RUNTIME_CONFIG_OVER_ARGS_CNI,
  runsWithoutDevice,
  SINGLE_INSTANCE_PLUGINS,
  type ArgType,
  NO_EXTRA_READERS,
  parsePluginReads,
  type ArgsCniKey,
  type ExtraReaders,
  type IpamFacts,
  type PluginFacts,
  type Requested,
} from './plugins.js';
export { argsReachOf, ipamsOf, reachOf, type IpamUse, type Reach } from './reach.js';
export { CLAIM_TEMPLATE_ANNOTATION, NODE_SELECTOR_ANNOTATION, RESOURCE_NAME_ANNOTATION, nadKey } from './types.js';
export { NAD_API_VERSION, NAD_GROUP, NAD_KIND, NAD_PLURAL, NAD_VERSION, isNadObject } from './object.js';
export { nadFromObject, type NadFromObjectOptions } from './model.js';
export { analyzeCniConfig, summarizeCniConfig, KNOWN_CNI_VERSIONS, type CniAnalysis } from './cni.js';
export { parseClaimTemplate, parseNodeSelector, parseResourceNames, resourceNamesFromAnnotations, type Parsed } from './annotations.js';
export { validateNadObject, type NadValidation, type ValidateNadOptions } from './validate.js';
export { nadObjectsFromText, type ManifestParse } from './documents.js';
export { silentLogger, type NadLogger, type NadSourceEvent, type NadSourceEventHandler } from './logger.js';
export {
  cachedNadChars,
  MAX_CACHED_NAD_CHARS,
  MAX_MISSING_NADS_REMEMBERED,
  MAX_NAD_FETCHES_PER_REVIEW,
  MAX_NAD_GETS_IN_FLIGHT,
  MAX_NAD_GETS_WAITING,
  MISSING_NAD_MEMORY_MS,
  NAD_FETCHES_IN_PARALLEL_PER_REVIEW,
} from './limits.js';
export { StaticNadSource } from './static-source.js';
export { DirectoryNadSource, type DirectoryNadSourceOptions } from './directory-source.js';
export { ClusterNadSource, type ClusterNadSourceOptions } from './cluster-source.js';
export { createNadSource, tryLoadKubeConfig, type CreateNadSourceOptions } from './factory.js';
export { placeInRanges, parseCidr, inSubnetOf, isLinkLocal6, type Cidr } from './ranges.js';
export { Interner, internString } from './intern.js';
export {
  macSettingOf,
  interfaceCreatorOf,
  type MacDoor,
  type MacSetter,
} from './mac-setters.js';
export { extendedResourceName } from './names.js';
