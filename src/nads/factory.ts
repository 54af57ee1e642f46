// Choosing the NAD source: a directory when one is given, else the cluster.
import { findCredentials, type FindCredentialsOptions, type KubeCredentials } from '../kube/index.js';
import { ClusterNadSource, type ClusterNadSourceOptions } from './cluster-source.js';
import { DirectoryNadSource, type DirectoryNadSourceOptions } from './directory-source.js';
import type { NadSource } from './types.js';

export type TryLoadKubeConfigEnv = FindCredentialsOptions;

/**
 * The cluster's credentials as kubectl finds them ($KUBECONFIG, ~/.kube/config, then in-cluster),
 * or undefined when there are none. Only an `exec` or `auth-provider` kubeconfig user loads @kubernetes/client-node.
 */
export function tryLoadKubeConfig(where: TryLoadKubeConfigEnv = {}): Promise<KubeCredentials | undefined> {
  return findCredentials(where);
}

export interface CreateNadSourceOptions extends DirectoryNadSourceOptions, ClusterNadSourceOptions {
  /** `--nads DIR`: read NADs from files instead of the cluster. */
  dir?: string;
  /** The cluster's credentials (see tryLoadKubeConfig). */
  kubeConfig?: KubeCredentials;
}

/** A directory source for `dir`, else a cluster source; undefined when neither is available. */
export function createNadSource(options: CreateNadSourceOptions): NadSource | undefined {
  if (options.dir !== undefined) return new DirectoryNadSource(options.dir, options);
  return options.kubeConfig ? new ClusterNadSource(options.kubeConfig, options) : undefined;
}
