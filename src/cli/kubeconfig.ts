// The cluster, user and namespace a kubectl plugin works with, found as kubectl finds them:
// `--kubeconfig`, else $KUBECONFIG (files merged, the first one's current context), else
// ~/.kube/config; `--context` picks another context; the namespace is the context's, else
// `default`. kubectl passes none of its own flags to a plugin, so the plugin reads them itself.
import { existsSync } from 'node:fs';
// The light modules only (not ../kube/index.js): `kubectl netattach` reads the kubeconfig before the webhook's core is loaded.
import {
  credentialsFromKubeconfig,
  defaultKubeconfigFiles,
  inClusterCredentials,
  serviceAccountNamespace,
  type KubeCredentials,
  KubeconfigError,
  readKubeconfig,
} from '../kube/index.js';

export interface KubectlContext {
  credentials: KubeCredentials;
  /** The context's namespace, else `default` (in a pod: the service account's). */
  namespace: string;
  /** The kubeconfig context used (none in-cluster). */
  context?: string;
  /** Fields of the kubeconfig ignored as kubectl ignores them (unknown names), to say as warnings. */
  warnings: string[];
}

export interface KubectlConfigOptions {
  kubeconfig?: string;
  context?: string;
  env: NodeJS.ProcessEnv;
  home?: string;
  exists?: (path: string) => boolean;
}

/** The kubeconfig files kubectl would read, in order; empty when there are none (in-cluster, or nothing). */
export function kubeconfigFiles(o: KubectlConfigOptions): string[] | { error: string } {
  const exists = o.exists ?? existsSync;
  if (o.kubeconfig !== undefined)
    return exists(o.kubeconfig) ? [o.kubeconfig] : { error: `--kubeconfig: no such file ${JSON.stringify(o.kubeconfig)}` };
  return defaultKubeconfigFiles({ env: o.env, exists, ...(o.home ? { home: o.home } : {}) });
}

export async function loadKubectlContext(o: KubectlConfigOptions): Promise<KubectlContext | { error: string }> {
  const files = kubeconfigFiles(o);
  if ('error' in files) return files;
  if (files.length === 0) {
    const inCluster = o.context === undefined ? inClusterCredentials({ env: o.env }) : undefined;
    if (inCluster) return { credentials: inCluster, namespace: serviceAccountNamespace(o.env) ?? 'default', warnings: [] };
    return {
      error:
        o.context === undefined
          ? 'no kubeconfig found ($KUBECONFIG, ~/.kube/config, or in-cluster)'
          : `--context ${o.context}: no kubeconfig found`,
    };
  }
  try {
    const config = readKubeconfig(files, o.context !== undefined ? { context: o.context } : {});
    const credentials = await credentialsFromKubeconfig(config, { env: o.env });
    return { credentials, namespace: config.namespace || 'default', context: config.context, warnings: config.warnings };
  } catch (e) {
    if (e instanceof KubeconfigError && e.problem.path === '--context')
      return { error: `--context: context ${JSON.stringify(o.context)} not found in ${files.join(', ')}` };
    if (e instanceof KubeconfigError) return { error: e.message };
    return { error: `kubeconfig ${files.join(', ')}: ${kubeconfigErrorText(e)}` };
  }
}

/**
 * Why a kubeconfig could not be read, without its text: a YAML parser's message quotes the lines
 * around the error, and those may hold the user's token, password or key. Only the reason and the
 * position are said (line and column from 1, as an editor shows them).
 */
export function kubeconfigErrorText(e: unknown): string {
  // Ours (src/kube/kubeconfig.ts) name the field and never its secret value.
  if (e instanceof KubeconfigError) return e.message;
  const yamlError = e as { name?: unknown; reason?: unknown; mark?: { line?: unknown; column?: unknown } };
  if (yamlError?.name === 'YAMLException') {
    const at =
      typeof yamlError.mark?.line === 'number' && typeof yamlError.mark.column === 'number'
        ? ` at line ${yamlError.mark.line + 1}, column ${yamlError.mark.column + 1}`
        : '';
    return `not valid YAML${at}: ${typeof yamlError.reason === 'string' ? yamlError.reason : 'syntax error'}`;
  }
  // Other messages (a missing file, an unknown context) name no value of the file; cut them all the same.
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0]!.slice(0, 300);
}
