// Public face of the annotation parser/validator (pure functions, no I/O beyond loading the schema).
export { parseNetworks, parseDefaultNetwork, detectFormat, MAX_PROBLEMS, MAX_ELEMENTS, DEFAULT_MULTUS_NAMESPACE } from './parse.js';
export { canonicalMac, canonicalGuid, colonForm, parseHwAddr } from './hwaddr.js';
export { dns1123LabelProblem, dns1123SubdomainProblem } from './formats.js';
export { gatewayConflicts, multusAutoNumber } from './cross.js';
export { serializeSelections } from './serialize.js';
export { argsAddresses, ARGS_KEY_FIELD, type ArgsAddress, type ArgsKey } from './cni-args.js';
export { SELECTION_KEYS } from './element.js';
export { NETWORKS_ANNOTATION, DEFAULT_NETWORK_ANNOTATION } from './types.js';
export type {
  AnnotationFormat,
  Bandwidth,
  DefaultNetworkOptions,
  NetworkSelection,
  ParsedNetwork,
  ParseOptions,
  ParseResult,
  PortMapping,
} from './types.js';
