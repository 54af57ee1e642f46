// Public face of src/kube: the one way this project talks to the API server. Raw HTTP(S) with
// in-cluster or kubeconfig credentials (client-node is loaded only for kubeconfig files); a
// list-then-watch loop that keeps no objects; a GET bounded by a deadline for the request path.
export {
  kubeTransport,
  KubeRequestError,
  MAX_RESPONSE_BYTES,
  METADATA_ACCEPT,
  METADATA_WATCH_ACCEPT,
  type KubeTransport,
} from './transport.js';
export { ListSplitter, LineSplitter, ListTooLargeError, MAX_ITEM_BYTES, MAX_ENVELOPE_BYTES, type ListEnvelope } from './list-stream.js';
export {
  ListWatch,
  listPage,
  type KubeObject,
  type ObjectMeta,
  type ListWatchHandler,
  type ListWatchOptions,
  type RetryInfo,
} from './list-watch.js';
export { RequestSlots, type SlotOutcome } from './slots.js';
export { getObject, type GetObjectOptions, type GetOutcome } from './get.js';
export { describeKubeError } from './errors.js';
export { WatchedCache, transportFor } from './watched.js';
export { leaseApi, type LeaseApi, type CreateResult, type GetResult, type DeleteResult } from './leases.js';
export {
  inClusterCredentials,
  kubeconfigCredentials,
  defaultKubeconfigFiles,
  credentialsFromKubeconfig,
  redactSecrets,
  findCredentials,
  SERVICE_ACCOUNT_DIR,
  serviceAccountNamespace,
  TOKEN_REREAD_MS,
  type KubeCredentials,
  type InClusterOptions,
  type FindCredentialsOptions,
} from './credentials.js';
export { readKubeconfig, renderKubeconfigProblem, KubeconfigError, type KubeconfigProblem, type ResolvedKubeconfig } from './kubeconfig.js';
export { parseProxyUrl, proxyDisplay, ProxyError } from './proxy.js';
export { probeServer, describeConnectionError } from './probe.js';
