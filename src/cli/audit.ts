// `netattach audit`: the background audit's judgement on demand, of the live pods and NADs of the
// cluster (`--cluster`) or of pods and NADs in files (`kubectl get pods,net-attach-def -A -o
// yaml`). Same engine, same messages.
import {
  auditNadObjects,
  auditSnapshot,
  finished,
  livePodOf,
  loadAuditCluster,
  renderAuditJson,
  renderAuditTable,
  violatesEnforce,
  type LivePod,
} from '../audit/index.js';
import { describeSkipped, draViewOf, loadManifests, namespaceLabelsOf, renderReadError } from '../check/index.js';
import type { DraView } from '../dra/index.js';
import { isNadObject, nadFromObject, nadKey, tryLoadKubeConfig, type Nad } from '../nads/index.js';
import { EMPTY_POLICY_SET, type PolicySet } from '../policy/index.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, parseCommandLine, readAll, type CliIO } from './io.js';
import { terminalSafeIO } from './terminal.js';
import { configOfFlags, loadNadObjects, loadPolicyFiles, VERDICT_OPTIONS, VERDICT_USAGE } from './rule-inputs.js';

export const USAGE = `Usage: netattach audit (--cluster | PATH...) [options]

Judges running pods and NADs with the rules of the netattach webhooks, as the background
audit of 'netattach serve' does: each pod with networks against the NADs, namespace labels
and policies in force now, with uniqueness judged among the pods (never a pod against
itself); each NAD as the NAD webhook judges one created now.

      --cluster          the live pods, NADs, namespace labels and NetworkAttachmentPolicies
                         of the cluster of the current kubeconfig, read once, read-only
  PATH                   or: files or directories holding Pods (e.g. the output of
                         'kubectl get pods -A -o yaml'), NADs and Namespaces; '-' for stdin
      --nads PATH        more NADs from files or directories (repeatable; judged too)
      --policy FILE      NetworkAttachmentPolicy documents (repeatable); with --cluster they
                         replace the cluster's policies
      --timeout SECONDS  how long --cluster waits for the cluster (default 10)
${VERDICT_USAGE}  -o, --output FORMAT    table (default) or json
  -h, --help             show this help

Exit status: 0 no pod or NAD breaks an Enforce rule, 1 some pod or NAD does (one like it
would be denied now), 2 usage error, an input that could not be read, or nothing to judge
(no Pod and no NAD in the input: an empty stream is a pipeline that failed).
`;

/** What the audit judges, for the message when the input holds none of it. */
export const AUDIT_JUDGES =
  "audit judges Pods and NetworkAttachmentDefinitions (e.g. 'kubectl get pods,namespaces,net-attach-def -A -o yaml')";

const fail = (io: CliIO, message: string): number => (io.stderr(`netattach audit: ${message}\n`), EXIT_USAGE);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function run(argv: string[], rawIO: CliIO): Promise<number> {
  // Names, configs and messages from the cluster or the files are printed: shown escaped where they would steer the terminal.
  const io = terminalSafeIO(rawIO);
  const parsed = parseCommandLine('audit', USAGE, io, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      cluster: { type: 'boolean' },
      nads: { type: 'string', multiple: true },
      policy: { type: 'string', multiple: true },
      timeout: { type: 'string' },
      ...VERDICT_OPTIONS,
      output: { type: 'string', short: 'o', default: 'table' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') return fail(io, `--output must be table or json, not ${JSON.stringify(output)}`);
  if (values.cluster && positionals.length > 0) return fail(io, '--cluster and PATH are alternatives: give one');
  if (!values.cluster && positionals.length === 0) {
    io.stderr(`netattach audit: give --cluster or a PATH ('-' reads stdin)\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const timeoutSeconds = values.timeout === undefined ? 10 : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    return fail(io, `--timeout must be a positive number of seconds, not ${JSON.stringify(values.timeout)}`);
  // The flags of serve that change a pod's verdict: the audit must be told them to judge alike.
  const config = configOfFlags(values);
  if (typeof config === 'string') return fail(io, config);

  let policies: PolicySet | undefined;
  if (values.policy) {
    const loaded = await loadPolicyFiles('audit', values.policy, io);
    if (typeof loaded === 'number') return loaded;
    policies = loaded;
  }
  // Parsed entries (what pods are judged against) and the objects themselves (judged too), by key.
  const nads = new Map<string, Nad>();
  const nadObjects = new Map<string, unknown>();
  const addNad = (object: unknown, override: boolean): void => {
    const n = nadFromObject(object, { defaultNamespace: 'default', resourceNameKeys: config.resourceNameKeys });
    const k = nadKey(n.namespace, n.name);
    if (!override && nads.has(k)) return;
    nads.set(k, n);
    nadObjects.set(k, object);
  };
  if (values.nads) {
    const loaded = await loadNadObjects(values.nads, io);
    if (typeof loaded === 'number') return loaded;
    for (const o of loaded) addNad(o, true);
  }

  let pods: LivePod[] = [];
  let namespaceLabels: ((ns: string) => Record<string, string> | undefined) | undefined;
  let dra: DraView | undefined;
  /** Objects of the input that are neither Pods nor NADs, by kind. */
  const skipped = new Map<string, number>();
  let judgedPods = 0;
  if (values.cluster) {
    const kc = await tryLoadKubeConfig({ env: io.env });
    if (!kc) return fail(io, '--cluster: no kubeconfig found ($KUBECONFIG, ~/.kube/config, or in-cluster)');
    const loaded = await loadAuditCluster(kc, {
      timeoutMs: timeoutSeconds * 1000,
      resourceNameKeys: config.resourceNameKeys,
      readPolicies: policies === undefined,
    });
    if (!loaded.ok) return fail(io, `--cluster: ${loaded.error}`);
    const s = loaded.snapshot;
    for (const o of s.nadObjects) addNad(o, false);
    pods = s.pods;
    judgedPods = pods.length;
    namespaceLabels = s.namespaceLabels;
    if (s.dra) dra = draViewOf([], s.dra, 'default');
    policies ??= s.policies;
    for (const problem of [s.namespaceProblem, s.policyProblem, s.draProblem])
      if (problem) io.stderr(`netattach audit: warning: ${problem}\n`);
  } else {
    const manifests = await loadManifests(positionals, () => readAll(io.stdin));
    if (manifests.errors.length > 0) {
      for (const e of manifests.errors) io.stderr(renderReadError(e));
      return EXIT_USAGE;
    }
    const objects = manifests.objects.map((m) => m.object);
    for (const object of objects) {
      if (isNadObject(object)) addNad(object, true);
      else if (isObject(object) && object['apiVersion'] === 'v1' && object['kind'] === 'Pod') {
        judgedPods++;
        if (finished(object)) continue;
        const p = livePodOf(object, 'default');
        if (p) pods.push(p);
      } else {
        const kind =
          isObject(object) && typeof object['kind'] === 'string' && object['kind'] !== '' ? object['kind'] : 'not a Kubernetes object';
        skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
      }
    }
    // Namespaces (their labels) and DeviceClasses, ResourceClaimTemplates are read as check reads them.
    namespaceLabels = namespaceLabelsOf(objects);
    dra = draViewOf(objects, undefined, 'default');
  }

  const labels = namespaceLabels ? { namespaceLabels } : {};
  const audits = auditSnapshot({
    pods,
    nads: [...nads.values()],
    ...labels,
    policies: policies ?? EMPTY_POLICY_SET,
    config,
    ...(dra ? { dra } : {}),
  });
  const nadAudits = auditNadObjects({ objects: [...nadObjects.values()], ...labels, config, defaultNamespace: 'default' });
  io.stdout(output === 'json' ? renderAuditJson(audits, nadAudits) : renderAuditTable(audits, nadAudits));
  // An empty `kubectl get ... |` (a failed pipeline) must not pass CI as "no findings".
  if (judgedPods === 0 && nadObjects.size === 0) {
    const what = values.cluster ? 'the cluster lists no live pods and no NADs' : describeSkipped(skipped);
    io.stderr(`netattach audit: nothing to judge: ${what}; ${AUDIT_JUDGES}\n`);
    return EXIT_USAGE;
  }
  return violatesEnforce(audits, nadAudits) ? EXIT_FINDINGS : EXIT_OK;
}
