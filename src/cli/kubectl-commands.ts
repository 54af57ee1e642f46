// The commands of `kubectl netattach` (kubectl.ts is the shell: usage, arguments, help, loading
// this module only when a command runs). Three subcommands against the cluster of the current
// kubeconfig context, read once and read-only: `explain` (one pod, src/explain), `check -f` (netattach check with the
// cluster's NADs, policies, namespaces and running pods) and `audit` (netattach audit --cluster,
// one namespace or all). Only wiring here: the judging is the webhook's own core.
import { DEFAULT_ADMISSION_CONFIG, type UserInfo } from '../admission/index.js';
import {
  auditNadObjects,
  auditSnapshot,
  loadAuditCluster,
  renderAuditJson,
  renderAuditTable,
  violatesEnforce,
  type AuditClusterSnapshot,
} from '../audit/index.js';
import {
  buildReport,
  checkManifests,
  exitCodeOf,
  loadManifests,
  renderJson,
  renderReadError,
  renderText,
  type CheckOptions,
} from '../check/index.js';
import { launcherPodObject, renderLauncher, VM_RESOURCES } from '../kubevirt/index.js';
import {
  explainExitCode,
  explainPod,
  heldAsServeHolds,
  renderExplanation,
  EXPLAIN_FORMAT_VERSION,
  type Explanation,
} from '../explain/index.js';
import { getObject, kubeTransport, type KubeCredentials } from '../kube/index.js';
import { EMPTY_POLICY_SET } from '../policy/index.js';
import { EXIT_USAGE, readAll, type CliIO } from './io.js';
import type { KubectlContext } from './kubeconfig.js';
import type { PluginArgs } from './kubectl-args.js';
import { yamlText } from './yaml-text.js';

const fail = (io: CliIO, message: string): number => (io.stderr(`error: ${message}\n`), EXIT_USAGE);
const yamlOf = yamlText;

/** What kubectl.ts has done before loading this module: the kubeconfig read, the server probed. */
export interface Started {
  ctx: KubectlContext;
  /** GET /version (probeServer): a message when the cluster cannot be read. */
  probe: Promise<string | undefined>;
  /** Aborts the probe once the reads are done (its answer is then no longer needed). */
  probeDone: AbortController;
}

/** One parsed command (not help) against the cluster; `io` is terminal-safe and redacts the kubeconfig's secrets. */
export async function runCommand(parsed: PluginArgs, io: CliIO, started: Started): Promise<number> {
  let args: PluginArgs = parsed;
  const { ctx, probeDone } = started;
  const creds = ctx.credentials;
  const namespace = args.namespace ?? ctx.namespace;
  const config = DEFAULT_ADMISSION_CONFIG;
  // A refused server, a failing proxy, a certificate or credentials the server rejects: said at
  // once (probeServer) instead of after the reads retried them until --request-timeout.
  const unreadable = new AbortController();
  const probe = started.probe.then((why) => {
    if (why) unreadable.abort();
    return why;
  });
  // The pod is read beside the rest: a missing pod is said as soon as the cluster answers.
  const podRead =
    args.pod !== undefined
      ? getObject(kubeTransport(creds), `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(args.pod)}`, {
          timeoutMs: args.timeoutMs,
          signal: unreadable.signal,
        })
      : undefined;
  const vmRead =
    args.vm !== undefined
      ? getObject(
          kubeTransport(creds),
          `/apis/kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/${args.vm.resource}/${encodeURIComponent(args.vm.name)}`,
          { timeoutMs: args.timeoutMs, signal: unreadable.signal },
        )
      : undefined;
  const asker = args.userInfo
    ? Promise.resolve(args.userInfo)
    : args.command === 'audit'
      ? Promise.resolve(undefined)
      : whoAmI(creds, args.timeoutMs, unreadable.signal);
  const loaded = await loadAuditCluster(creds, {
    timeoutMs: args.timeoutMs,
    resourceNameKeys: config.resourceNameKeys,
    readPolicies: true,
    signal: unreadable.signal,
  });
  probeDone.abort();
  const why = await probe;
  if (why) return fail(io, why);
  if (!loaded.ok) return fail(io, loaded.error);
  // Policies judge who creates the pod: by default the kubeconfig's user, as `kubectl auth whoami` finds it.
  const userInfo = await asker;
  if (userInfo) args = { ...args, userInfo };
  else if (args.command !== 'audit')
    io.stderr('Warning: who you are could not be read (SelfSubjectReview); policies that name users judge an unknown user (give --as)\n');
  const s = loaded.snapshot;
  for (const problem of [s.namespaceProblem, s.policyProblem, s.draProblem]) if (problem) io.stderr(`Warning: ${problem}\n`);

  if (args.command === 'audit') return audit(args, namespace, s, io);
  if (args.command === 'check') return check(args, namespace, s, io);

  let pods: Array<{ object: unknown; source: 'cluster' | 'file'; vm?: unknown }>;
  if (vmRead && args.vm) {
    const got = await vmRead;
    const what = `${args.vm.resource} ${JSON.stringify(args.vm.name)}`;
    if (got.status === 'not-found') return fail(io, `${what} not found in namespace ${namespace}`);
    if (got.status === 'unavailable') return fail(io, `cannot read ${what} in ${namespace}: ${got.reason}`);
    const keys = VM_RESOURCES.get(`kubevirt.io/${args.vm.resource}`)!.keys;
    io.stderr(
      `Explaining the virt-launcher pod KubeVirt makes for ${what} (its networks annotation rendered from ${keys.join('.')}.networks and .domain.devices.interfaces)\n`,
    );
    // The binding plugins' NADs as virt-controller adds them, when KubeVirt's registry was read.
    const registry = s.kubevirtBindings;
    const plugins = registry?.known ? registry.plugins : undefined;
    // Said only for a VM with a binding interface (the note it gets), with why the registry is unknown.
    if (registry && !registry.known && renderLauncher(got.object, keys, namespace).notes.length > 0)
      io.stderr(`Warning: KubeVirt's binding plugins unknown (${registry.reason}); binding interfaces not checked\n`);
    pods = [{ object: launcherPodObject(got.object, keys, namespace, plugins), source: 'cluster', vm: got.object }];
  } else if (podRead) {
    const got = await podRead;
    if (got.status === 'not-found') return fail(io, `pods ${JSON.stringify(args.pod)} not found in namespace ${namespace}`);
    if (got.status === 'unavailable') return fail(io, `cannot read pod ${namespace}/${args.pod}: ${got.reason}`);
    pods = [{ object: got.object, source: 'cluster' }];
  } else {
    const manifests = await loadManifests(args.files, () => readAll(io.stdin));
    if (manifests.errors.length > 0) {
      for (const e of manifests.errors) io.stderr(renderReadError(e));
      return EXIT_USAGE;
    }
    pods = manifests.objects.filter(({ object }) => isPod(object)).map(({ object }) => ({ object, source: 'file' as const }));
    if (pods.length === 0)
      return fail(io, `no Pod in ${args.files.join(', ')} (explain explains Pods; 'kubectl netattach check -f' judges any object)`);
  }
  const explanations = pods.map(({ object, source, vm }) =>
    explainPod({
      pod: object,
      source,
      ...(vm !== undefined ? { vm } : {}),
      defaultNamespace: namespace,
      nads: s.nads,
      ...(s.namespaceLabels ? { namespaceLabels: s.namespaceLabels } : {}),
      policies: s.policies ?? EMPTY_POLICY_SET,
      config,
      ...(s.dra ? { dra: s.dra } : {}),
      ...(s.kubevirtBindings ? { kubevirtBindings: s.kubevirtBindings } : {}),
      ...(args.userInfo ? { userInfo: args.userInfo } : {}),
      livePods: s.pods,
    }),
  );
  io.stdout(renderExplanations(explanations, args.output));
  return Math.max(...explanations.map(explainExitCode));
}

/** The user the credentials authenticate as (SelfSubjectReview, what `kubectl auth whoami` asks); undefined when it cannot be read. */
async function whoAmI(credentials: KubeCredentials, timeoutMs: number, signal: AbortSignal): Promise<UserInfo | undefined> {
  const transport = kubeTransport(credentials);
  const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  try {
    const r = await transport.send?.(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      review,
      AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]),
    );
    const user = (r?.body as { status?: { userInfo?: { username?: unknown; groups?: unknown; uid?: unknown } } } | undefined)?.status
      ?.userInfo;
    if (r?.status !== 201 || typeof user?.username !== 'string') return undefined;
    return {
      username: user.username,
      ...(typeof user.uid === 'string' && user.uid ? { uid: user.uid } : {}),
      ...(Array.isArray(user.groups) ? { groups: user.groups.filter((g): g is string => typeof g === 'string') } : {}),
    };
  } catch {
    return undefined;
  }
}

const isPod = (o: unknown): boolean =>
  typeof o === 'object' &&
  o !== null &&
  (o as Record<string, unknown>)['apiVersion'] === 'v1' &&
  (o as Record<string, unknown>)['kind'] === 'Pod';

/** One explanation as itself, several as a List (as kubectl prints one object or several). */
export function renderExplanations(explanations: readonly Explanation[], output: string): string {
  if (output === 'json' || output === 'yaml') {
    const doc = explanations.length === 1 ? explanations[0] : { formatVersion: EXPLAIN_FORMAT_VERSION, kind: 'List', items: explanations };
    const json = `${JSON.stringify(doc, null, 2)}\n`;
    return output === 'json' ? json : yamlOf(json);
  }
  return explanations.map((e) => renderExplanation(e, { wide: output === 'wide' })).join('\n\n');
}

function check(args: PluginArgs, namespace: string, s: AuditClusterSnapshot, io: CliIO): Promise<number> {
  return loadManifests(args.files, () => readAll(io.stdin)).then((manifests) => {
    const options: CheckOptions = {
      defaultNamespace: namespace,
      nads: s.nads,
      policies: s.policies ?? EMPTY_POLICY_SET,
      config: DEFAULT_ADMISSION_CONFIG,
      livePods: heldAsServeHolds(s.pods, DEFAULT_ADMISSION_CONFIG),
      ...(s.namespaceLabels ? { namespaceLabels: s.namespaceLabels } : {}),
      ...(s.dra ? { dra: s.dra } : {}),
      ...(s.kubevirtBindings ? { kubevirtBindings: s.kubevirtBindings } : {}),
      ...(args.userInfo ? { userInfo: args.userInfo } : {}),
    };
    const report = buildReport(checkManifests(manifests.objects, options), manifests.errors);
    for (const e of manifests.errors) io.stderr(renderReadError(e));
    const json = (): string => renderJson(report);
    io.stdout(
      args.output === 'json' ? json() : args.output === 'yaml' ? yamlOf(json()) : renderText(report, { verbose: args.output === 'wide' }),
    );
    return exitCodeOf(report);
  });
}

function audit(args: PluginArgs, namespace: string, s: AuditClusterSnapshot, io: CliIO): number {
  const config = DEFAULT_ADMISSION_CONFIG;
  const labels = s.namespaceLabels ? { namespaceLabels: s.namespaceLabels } : {};
  // Uniqueness is judged among all the running pods; only the output is narrowed to the namespace.
  const inScope = (ns: string): boolean => args.allNamespaces || ns === namespace;
  const pods = auditSnapshot({ pods: s.pods, nads: s.nads, ...labels, policies: s.policies ?? EMPTY_POLICY_SET, config }).filter((a) =>
    inScope(a.pod.namespace),
  );
  const nads = auditNadObjects({ objects: s.nadObjects, ...labels, config, defaultNamespace: 'default' }).filter((a) =>
    inScope(a.nad.namespace),
  );
  const json = (): string => renderAuditJson(pods, nads);
  io.stdout(args.output === 'json' ? json() : args.output === 'yaml' ? yamlOf(json()) : renderAuditTable(pods, nads));
  return violatesEnforce(pods, nads) ? 1 : 0;
}
