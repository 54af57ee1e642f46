// Choosing the NAD source: a directory when one is given, else the cluster.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterNadSource, type ClusterNadSourceOptions } from './cluster-source.js';
import { DirectoryNadSource, type DirectoryNadSourceOptions } from './directory-source.js';
import type { NadSource } from './types.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface TryLoadKubeConfigEnv {
  env?: NodeJS.ProcessEnv;
  home?: string;
  exists?: (path: string) => boolean;
}

/**
 * The cluster configuration as kubectl finds it ($KUBECONFIG, ~/.kube/config, then in-cluster),
 * or undefined when there is none: client-node's loadFromDefault would instead fall back to
 * http://localhost:8080, which is never what a webhook wants.
 */
export function tryLoadKubeConfig(where: TryLoadKubeConfigEnv = {}): KubeConfig | undefined {
  const env = where.env ?? process.env;
  const exists = where.exists ?? existsSync;
  const kc = new KubeConfig();
  try {
    const files = (env.KUBECONFIG ?? '').split(process.platform === 'win32' ? ';' : ':').filter(Boolean);
    const home = where.home ?? homedir();
    if (files.some(exists)) {
      kc.loadFromFile(files.find(exists)!);
      for (const extra of files.filter(exists).slice(1)) {
        const other = new KubeConfig();
        other.loadFromFile(extra);
        kc.mergeConfig(other);
      }
    } else if (files.length === 0 && exists(join(home, '.kube', 'config'))) {
      kc.loadFromFile(join(home, '.kube', 'config'));
    } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && exists(SERVICE_ACCOUNT_TOKEN)) {
      kc.loadFromCluster();
    } else {
      return undefined;
    }
  } catch {
    return undefined;
  }
  return kc.getCurrentCluster() ? kc : undefined;
}

export interface CreateNadSourceOptions extends DirectoryNadSourceOptions, ClusterNadSourceOptions {
  /** `--nads DIR`: read NADs from files instead of the cluster. */
  dir?: string;
  /** A loaded configuration, or 'auto' (default) for tryLoadKubeConfig(). */
  kubeConfig?: KubeConfig | 'auto';
}

/** A directory source for `dir`, else a cluster source; undefined when neither is available. */
export function createNadSource(options: CreateNadSourceOptions): NadSource | undefined {
  if (options.dir !== undefined) return new DirectoryNadSource(options.dir, options);
  const kc = options.kubeConfig === undefined || options.kubeConfig === 'auto' ? tryLoadKubeConfig() : options.kubeConfig;
  return kc ? new ClusterNadSource(kc, options) : undefined;
}
