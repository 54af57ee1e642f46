// `netattach check [options] PATH...`: lints manifests offline with the webhook's own core.
// This module only wires options, files and the cluster to the pure engine in src/check.
import {
  buildReport,
  checkManifests,
  exitCodeOf,
  loadFromCluster,
  nothingJudged,
  loadManifests,
  renderJson,
  renderReadError,
  renderText,
  type CheckOptions,
  type ReadError,
} from '../check/index.js';
import { devicePathOf, StaticDraView } from '../dra/index.js';
import type { NetworkPathResult } from '../check/index.js';
import { tryLoadKubeConfig } from '../nads/index.js';
import { configOfFlags, loadNadFiles, loadPolicyFiles, VERDICT_OPTIONS, VERDICT_USAGE } from './rule-inputs.js';
import type { UserInfo } from '../admission/index.js';
import { EXIT_USAGE, parseCommandLine, readAll, type CliIO } from './io.js';
import { terminalSafeIO } from './terminal.js';

export const USAGE = `Usage: netattach check [options] PATH...

Checks Kubernetes manifests with the rules of the netattach webhooks, offline: every Pod,
workload pod template and NetworkAttachmentDefinition gets the verdict and the messages the
webhook would give when the manifests are applied.

  PATH                   a YAML (multi-document) or JSON file, a directory (searched
                         recursively for .yaml, .yml and .json files), or '-' for stdin
      --nads PATH        NADs from these files or directories (repeatable), besides the
                         NADs among the checked manifests, which always count as present
      --cluster          NADs (and namespace labels, DeviceClasses, ResourceClaimTemplates,
                         KubeVirt's binding plugins) from the cluster of the current
                         kubeconfig, read once, read-only; lists how each network's device
                         is served (docs/dra.md)
      --timeout SECONDS  how long --cluster waits for the cluster (default 10)
      --policy FILE      NetworkAttachmentPolicy documents to apply (repeatable)
  -n, --namespace NS     namespace of objects that name none (default "default")
      --user NAME        the user applying the manifests, as policies see it
      --group NAME       a group of that user (repeatable)
      --mutate           show what the mutating webhook would change in each Pod
${VERDICT_USAGE}  -o, --output FORMAT    text (default) or json (a stable format, see docs/check.md)
  -v, --verbose          also list clean and skipped objects and audit findings
  -h, --help             show this help

Exit status: 0 nothing would be denied (warnings allowed), 1 something would be denied,
2 usage error, an input (file, policy, NADs, cluster) that could not be read, or inputs
with nothing the webhooks judge (empty, or only other kinds or excluded namespaces).
`;

const fail = (io: CliIO, message: string): number => {
  io.stderr(`netattach check: ${message}\n`);
  return EXIT_USAGE;
};

export async function run(argv: string[], rawIO: CliIO): Promise<number> {
  // Names, configs and messages from the cluster or the files are printed: shown escaped where they would steer the terminal.
  const io = terminalSafeIO(rawIO);
  const parsed = parseCommandLine('check', USAGE, io, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      nads: { type: 'string', multiple: true },
      cluster: { type: 'boolean' },
      timeout: { type: 'string' },
      policy: { type: 'string', multiple: true },
      namespace: { type: 'string', short: 'n' },
      user: { type: 'string' },
      group: { type: 'string', multiple: true },
      mutate: { type: 'boolean' },
      ...VERDICT_OPTIONS,
      output: { type: 'string', short: 'o', default: 'text' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') return fail(io, `--output must be text or json, not ${JSON.stringify(output)}`);
  if (positionals.length === 0) {
    io.stderr(`netattach check: no PATH given (use '-' to read stdin)\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (positionals.filter((p) => p === '-').length > 1) return fail(io, "'-' (stdin) may be given only once");
  if (values.cluster && values.nads) return fail(io, '--nads and --cluster are mutually exclusive');
  if (values.namespace === '') return fail(io, '--namespace must not be empty');
  const timeoutSeconds = values.timeout === undefined ? 10 : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    return fail(io, `--timeout must be a positive number of seconds, not ${JSON.stringify(values.timeout)}`);

  const config = configOfFlags(values);
  if (typeof config === 'string') return fail(io, config);
  const defaultNamespace = values.namespace ?? 'default';
  const options: CheckOptions = { defaultNamespace, config, mutate: values.mutate === true };
  const userInfo: UserInfo = {};
  if (values.user !== undefined) userInfo.username = values.user;
  if (values.group !== undefined) userInfo.groups = values.group;
  options.userInfo = userInfo;

  // Policies and NADs set the rules: without them the check would be a different check, so
  // any problem there stops before checking anything.
  if (values.policy) {
    const policies = await loadPolicyFiles('check', values.policy, io);
    if (typeof policies === 'number') return policies;
    options.policies = policies;
  }

  if (values.nads) {
    const nads = await loadNadFiles(values.nads, io, defaultNamespace, config.resourceNameKeys);
    if (typeof nads === 'number') return nads;
    options.nads = nads;
  }

  let networks: NetworkPathResult[] | undefined;
  if (values.cluster) {
    const kc = await tryLoadKubeConfig({ env: io.env });
    if (!kc) return fail(io, '--cluster: no kubeconfig found ($KUBECONFIG, ~/.kube/config, or in-cluster)');
    const loaded = await loadFromCluster(kc, { timeoutMs: timeoutSeconds * 1000, resourceNameKeys: config.resourceNameKeys });
    if (!loaded.ok) return fail(io, `--cluster: ${loaded.error}`);
    options.nads = loaded.snapshot.nads;
    if (loaded.snapshot.namespaceLabels) options.namespaceLabels = loaded.snapshot.namespaceLabels;
    if (loaded.snapshot.namespaceProblem) io.stderr(`netattach check: warning: ${loaded.snapshot.namespaceProblem}\n`);
    if (loaded.snapshot.dra) options.dra = loaded.snapshot.dra;
    if (loaded.snapshot.draProblem) io.stderr(`netattach check: warning: ${loaded.snapshot.draProblem}\n`);
    if (loaded.snapshot.kubevirtBindings) options.kubevirtBindings = loaded.snapshot.kubevirtBindings;
    const view = new StaticDraView(loaded.snapshot.dra?.classes ?? [], loaded.snapshot.dra?.templates ?? []);
    const templatesKnown = loaded.snapshot.dra !== undefined;
    networks = loaded.snapshot.nads
      .filter((nad) => nad.resourceNames.length > 0 || nad.claimTemplate !== undefined)
      .map((nad) => {
        const p = devicePathOf(nad, {
          classesFor: (r) => view.classesFor(r),
          templateNamespaces: (t) => (templatesKnown ? view.templateNamespaces(t) : undefined),
        });
        return { namespace: nad.namespace, name: nad.name, path: p.path, summary: p.summary, problems: p.problems };
      });
  }

  const manifests = await loadManifests(positionals, () => readAll(io.stdin));
  const report = buildReport(checkManifests(manifests.objects, options), manifests.errors, networks);
  reportReadErrors(io, manifests.errors);
  io.stdout(output === 'json' ? renderJson(report) : renderText(report, { verbose: values.verbose === true }));
  // An empty stream (`kustomize build` that failed upstream) must not pass CI as "nothing denied".
  const nothing = manifests.errors.length === 0 ? nothingJudged(report.results) : undefined;
  if (nothing) io.stderr(`netattach check: ${nothing}\n`);
  return exitCodeOf(report);
}

/** Read errors go to stderr in both formats (JSON output carries them too): CI logs show them. */
function reportReadErrors(io: CliIO, errors: readonly ReadError[]): void {
  for (const e of errors) io.stderr(renderReadError(e));
}
