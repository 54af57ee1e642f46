// `netattach audit`: the background audit's judgement on demand, of the live pods and NADs of the
// cluster (`--cluster`) or of pods and NADs in files (`kubectl get pods,net-attach-def -A -o
// yaml`). Same engine, same messages.
import { auditNadObjects, auditSnapshot, finished, livePodOf, loadAuditCluster, renderAuditJson, renderAuditTable, violatesEnforce, type LivePod } from '../audit/index.js';
import { loadManifests, renderReadError } from '../check/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../admission/index.js';
import { isNadObject, nadFromObject, nadKey, tryLoadKubeConfig, type Nad } from '../nads/index.js';
import { EMPTY_POLICY_SET, type PolicySet } from '../policy/index.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, parseCommandLine, readAll, type CliIO } from './io.js';
import { loadNadObjects, loadPolicyFiles } from './rule-inputs.js';

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
  -o, --output FORMAT    table (default) or json
  -h, --help             show this help

Exit status: 0 no pod or NAD breaks an Enforce rule, 1 some pod or NAD does (one like it
would be denied now), 2 usage error or an input that could not be read.
`;

const fail = (io: CliIO, message: string): number => (io.stderr(`netattach audit: ${message}\n`), EXIT_USAGE);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCommandLine('audit', USAGE, io, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      cluster: { type: 'boolean' },
      nads: { type: 'string', multiple: true },
      policy: { type: 'string', multiple: true },
      timeout: { type: 'string' },
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
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) return fail(io, `--timeout must be a positive number of seconds, not ${JSON.stringify(values.timeout)}`);
  const config = DEFAULT_ADMISSION_CONFIG;

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
  if (values.cluster) {
    const kc = await tryLoadKubeConfig({ env: io.env });
    if (!kc) return fail(io, '--cluster: no kubeconfig found ($KUBECONFIG, ~/.kube/config, or in-cluster)');
    const loaded = await loadAuditCluster(kc, { timeoutMs: timeoutSeconds * 1000, resourceNameKeys: config.resourceNameKeys, readPolicies: policies === undefined });
    if (!loaded.ok) return fail(io, `--cluster: ${loaded.error}`);
    const s = loaded.snapshot;
    for (const o of s.nadObjects) addNad(o, false);
    pods = s.pods;
    namespaceLabels = s.namespaceLabels;
    policies ??= s.policies;
    for (const problem of [s.namespaceProblem, s.policyProblem]) if (problem) io.stderr(`netattach audit: warning: ${problem}\n`);
  } else {
    const manifests = await loadManifests(positionals, () => readAll(io.stdin));
    if (manifests.errors.length > 0) {
      for (const e of manifests.errors) io.stderr(renderReadError(e));
      return EXIT_USAGE;
    }
    const labels = new Map<string, Record<string, string>>();
    for (const { object } of manifests.objects) {
      if (isNadObject(object)) addNad(object, true);
      else if (isObject(object) && object['apiVersion'] === 'v1' && object['kind'] === 'Namespace') {
        const md = isObject(object['metadata']) ? object['metadata'] : {};
        if (typeof md['name'] === 'string') labels.set(md['name'], isObject(md['labels']) ? (md['labels'] as Record<string, string>) : {});
      } else if (isObject(object) && object['apiVersion'] === 'v1' && object['kind'] === 'Pod' && !finished(object)) {
        const p = livePodOf(object, 'default');
        if (p) pods.push(p);
      }
    }
    namespaceLabels = (ns) => labels.get(ns);
  }

  const labels = namespaceLabels ? { namespaceLabels } : {};
  const audits = auditSnapshot({ pods, nads: [...nads.values()], ...labels, policies: policies ?? EMPTY_POLICY_SET, config });
  const nadAudits = auditNadObjects({ objects: [...nadObjects.values()], ...labels, config, defaultNamespace: 'default' });
  io.stdout(output === 'json' ? renderAuditJson(audits, nadAudits) : renderAuditTable(audits, nadAudits));
  return violatesEnforce(audits, nadAudits) ? EXIT_FINDINGS : EXIT_OK;
}
