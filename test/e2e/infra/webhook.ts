/**
 * Points the project's webhook configurations at a netattach process running
 * on this machine and waits until the apiserver actually calls it.
 *
 * The manifests reference the webhook through a Service (`clientConfig.service`),
 * which cannot be routed here (no kube-proxy), so each webhook's clientConfig is
 * rewritten to `{ url: baseUrl + service.path, caBundle }`.
 *
 *   const configs = rewriteWebhookConfigs(readFileSync('manifests/webhook.yaml', 'utf8'), base, caPem);
 *   await applyWebhookConfigs(cluster, configs, { isCalled: () => seen > 0 });
 */
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import type { Cluster } from './cluster.js';

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';

const WEBHOOK_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

type Obj = Record<string, unknown>;

export interface WebhookConfig extends Obj {
  apiVersion: string;
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: { name: string } & Obj;
  webhooks?: Array<{ name: string; clientConfig?: ClientConfig } & Obj>;
}

export interface ClientConfig {
  url?: string;
  caBundle?: string;
  service?: { name?: string; namespace?: string; path?: string; port?: number };
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses a multi-document YAML (or JSON) text; `kind: List` items are flattened. */
export function parseManifests(text: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of YAML.parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const v: unknown = doc.toJS();
    if (!isObj(v)) continue;
    if (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) {
      for (const item of v.items) if (isObj(item)) out.push(item);
    } else {
      out.push(v);
    }
  }
  return out;
}

/** `https://127.0.0.1:8443` + `/mutate` (tolerates slashes on either side). */
export function joinUrl(baseUrl: string, p: string | undefined): string {
  const base = baseUrl.replace(/\/+$/, '');
  if (!p || p === '/') return base + '/';
  return base + (p.startsWith('/') ? p : `/${p}`);
}

/**
 * Keeps the Mutating/ValidatingWebhookConfigurations of `manifests` (a YAML text
 * or parsed objects) and rewrites every webhook's clientConfig to
 * `{ url: baseUrl + path, caBundle: base64(caPem) }`, where path is the
 * service reference's `path` (or the path of an existing `url`). Other objects
 * are dropped. The input objects are not modified.
 */
export function rewriteWebhookConfigs(manifests: string | Obj[], baseUrl: string, caPem: string): WebhookConfig[] {
  const objs = typeof manifests === 'string' ? parseManifests(manifests) : manifests;
  const caBundle = Buffer.from(caPem, 'utf8').toString('base64');
  const out: WebhookConfig[] = [];
  for (const o of objs) {
    if (typeof o.kind !== 'string' || !WEBHOOK_KINDS.has(o.kind)) continue;
    const copy = structuredClone(o) as WebhookConfig;
    if (!isObj(copy.metadata) || typeof copy.metadata.name !== 'string') {
      throw new Error(`${copy.kind} without metadata.name`);
    }
    // cert-manager's cainjector does not run here; we set caBundle ourselves
    const ann = copy.metadata.annotations;
    if (isObj(ann)) {
      delete ann['cert-manager.io/inject-ca-from'];
      delete ann['cert-manager.io/inject-ca-from-secret'];
      if (Object.keys(ann).length === 0) delete copy.metadata.annotations;
    }
    for (const wh of copy.webhooks ?? []) {
      const cc: ClientConfig = isObj(wh.clientConfig) ? wh.clientConfig : {};
      let p = cc.service?.path;
      if (p === undefined && cc.url) p = new URL(cc.url).pathname;
      wh.clientConfig = { url: joinUrl(baseUrl, p), caBundle };
    }
    out.push(copy);
  }
  return out;
}

export function toYaml(objs: Obj[]): string {
  return objs.map((o) => YAML.stringify(o)).join('---\n');
}

export interface ApplyWebhookOptions {
  /** Namespace of the canary pod (default "default"; must exist). */
  namespace?: string;
  /** Value of the networks annotation on the canary (default "netattach-e2e-canary"). */
  canaryNetworks?: string;
  /** Full canary pod to use instead of the default one (dry-run only, never persisted). */
  canaryPod?: Obj;
  /**
   * Strong signal that the webhook was reached, e.g. "the netattach server has
   * seen a request with dryRun: true". When given, it alone decides.
   */
  isCalled?: () => boolean | Promise<boolean>;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Delete existing configurations with the same names first (default true). */
  replace?: boolean;
}

export function canaryPod(namespace: string, networks: string): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'netattach-e2e-canary',
      namespace,
      annotations: { [NETWORKS_ANNOTATION]: networks },
    },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/pause:1' }] },
  };
}

/** Outcome of one dry-run create of the canary. */
export interface CanaryResult {
  code: number;
  /** The object returned by the apiserver, volatile fields removed (undefined on error). */
  object?: Obj;
  stderr: string;
}

function normalise(o: Obj): Obj {
  const c = structuredClone(o);
  if (isObj(c.metadata)) {
    for (const k of ['uid', 'creationTimestamp', 'managedFields', 'resourceVersion', 'generation']) delete c.metadata[k];
  }
  return c;
}

export async function dryRunCanary(cluster: Cluster, pod: Obj): Promise<CanaryResult> {
  const r = await cluster.kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
    input: JSON.stringify(pod),
    timeoutMs: 40_000,
  });
  if (r.code !== 0) return { code: r.code, stderr: r.stderr };
  return { code: 0, object: normalise(JSON.parse(r.stdout) as Obj), stderr: r.stderr };
}

/**
 * Decides from a canary result whether one of `names` (webhook names) acted on
 * it: a denial naming the webhook, or an object that differs from `baseline`
 * (the same canary before the configuration existed).
 */
export function canaryShowsWebhook(result: CanaryResult, baseline: CanaryResult | undefined, names: string[]): boolean {
  if (result.code !== 0) {
    // "admission webhook "x" denied the request" proves the call succeeded;
    // "failed calling webhook" means configured but unreachable: not yet.
    return names.some((n) => result.stderr.includes(`admission webhook "${n}" denied`));
  }
  if (baseline?.code !== 0 || !baseline.object || !result.object) return false;
  return JSON.stringify(result.object) !== JSON.stringify(baseline.object);
}

/**
 * Applies (server-side) the rewritten webhook configurations and polls with a
 * dry-run canary pod until the apiserver is seen calling the webhook.
 * Returns the last canary result.
 */
export async function applyWebhookConfigs(
  cluster: Cluster,
  configs: WebhookConfig[],
  opts: ApplyWebhookOptions = {},
): Promise<CanaryResult> {
  if (configs.length === 0) throw new Error('no webhook configurations to apply');
  const namespace = opts.namespace ?? 'default';
  const pod = opts.canaryPod ?? canaryPod(namespace, opts.canaryNetworks ?? 'netattach-e2e-canary');
  const names = configs.flatMap((c) => (c.webhooks ?? []).map((w) => w.name));

  if (opts.replace !== false) {
    for (const c of configs) {
      await cluster.kubectlOk(['delete', '--ignore-not-found', '--wait=false', c.kind.toLowerCase(), c.metadata.name]);
    }
  }
  // what the canary looks like without our webhooks (for mutation detection)
  const baseline = opts.isCalled ? undefined : await dryRunCanary(cluster, pod);

  await cluster.kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=netattach-e2e', '-f', '-'], {
    input: toYaml(configs),
  });

  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: CanaryResult | undefined;
  for (;;) {
    last = await dryRunCanary(cluster, pod);
    const ok = opts.isCalled ? await opts.isCalled() : canaryShowsWebhook(last, baseline, names);
    if (ok) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `webhooks ${names.join(', ')} not seen acting on a dry-run canary within ${opts.timeoutMs ?? 30_000} ms\n` +
          `last canary: exit ${last.code}\n${last.stderr}\n` +
          (last.object ? JSON.stringify(last.object.metadata) : ''),
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Convenience: read a manifest file, rewrite, apply and wait. */
export async function installWebhooksFromFile(
  cluster: Cluster,
  file: string,
  baseUrl: string,
  caPem: string,
  opts?: ApplyWebhookOptions,
): Promise<WebhookConfig[]> {
  const configs = rewriteWebhookConfigs(await readFile(file, 'utf8'), baseUrl, caPem);
  if (configs.length === 0) throw new Error(`${file} holds no Mutating/ValidatingWebhookConfiguration`);
  await applyWebhookConfigs(cluster, configs, opts);
  return configs;
}

/** Removes the configurations (e.g. between tests). */
export async function deleteWebhookConfigs(cluster: Cluster, configs: WebhookConfig[]): Promise<void> {
  for (const c of configs) {
    await cluster.kubectl(['delete', '--ignore-not-found', c.kind.toLowerCase(), c.metadata.name]);
  }
}
