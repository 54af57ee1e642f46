// Public face of src/kube: the one way this project talks to the API server. Raw HTTP(S) with
// @kubernetes/client-node's KubeConfig credentials, a list-then-watch loop that keeps no objects.
export { kubeTransport, KubeRequestError, METADATA_ACCEPT, METADATA_WATCH_ACCEPT, type KubeTransport } from './transport.js';
export { ListWatch, type KubeObject, type ObjectMeta, type ListWatchHandler, type ListWatchOptions } from './list-watch.js';
