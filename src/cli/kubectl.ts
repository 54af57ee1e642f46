// `kubectl netattach ...`: the CLI as a kubectl plugin (the same entry point, installed as
// `kubectl-netattach`). This module is only the shell: usage, arguments and help, so that
// `kubectl netattach --help` loads nothing else; the commands (kubectl-commands.ts) and the
// webhook's core they judge with are loaded once a command is to run.
// The kubeconfig is read and the server probed here, beside the import of the commands: a refused
// server is said without waiting for the webhook's core to load.
import { setTimeout as delay } from 'node:timers/promises';
import { EXIT_USAGE, type CliIO } from './io.js';
import { parsePluginArgs } from './kubectl-args.js';
import { terminalSafeIO } from './terminal.js';

export const USAGE = `Explain, check and audit pods with the netattach webhook's rules, against the cluster of the
current kubeconfig context (read only).

Usage:
  kubectl netattach explain pod NAME [-n NS] [-o wide|json|yaml]
  kubectl netattach explain (vm|vmi) NAME [-n NS] [-o wide|json|yaml]   the KubeVirt VM's launcher pod
  kubectl netattach explain -f pod.yaml [-o wide|json|yaml]
  kubectl netattach check -f FILE... [-n NS] [-o wide|json|yaml]
  kubectl netattach audit [-n NS | -A] [-o json|yaml]

Commands:
  explain   for each network of a pod: its NAD and plugin chain, which plugin reads each
            requested value, the device it adds; the policy rules that apply and their
            verdicts; the audit's finding now; and what admission would do with it now
  check     what admission would say to each object in the files (as 'netattach check',
            with the cluster's NADs, policies, namespaces and running pods)
  audit     the running pods and NADs judged now (as 'netattach audit --cluster')

Options:
  -f, --filename FILE       a YAML or JSON file, a directory, or '-' for stdin (repeatable)
  -n, --namespace NS        the namespace (default: the context's namespace, else "default")
  -A, --all-namespaces      audit: every namespace
  -o, --output FORMAT       json or yaml (versioned documents, docs/kubectl-plugin.md), or wide
      --kubeconfig FILE     the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
      --context NAME        the kubeconfig context (default: the current one)
      --request-timeout D   how long to wait for the cluster (default 10s)
      --as USER             the user creating the pod, as policies see it (nothing is sent as them)
      --as-group GROUP      a group of that user (repeatable)
  -h, --help                show this help

Exit status: explain 0 admission would allow the pod, 1 it would deny it; check 0 nothing would be
denied, 1 something would; audit 0 nothing breaks an Enforce rule, 1 something does; 2 usage error
or something that could not be read (file, kubeconfig, cluster, pod).
`;

/** How long the commands wait for the probe before loading (see run). */
export const PROBE_GRACE_MS = 150;

const fail = (io: CliIO, message: string): number => (io.stderr(`error: ${message}\n`), EXIT_USAGE);

export async function run(argv: string[], rawIO: CliIO): Promise<number> {
  // What the cluster sends is printed: shown escaped where it would steer the terminal.
  const io = terminalSafeIO(rawIO);
  const parsed = parsePluginArgs(argv);
  if ('error' in parsed) return fail(io, `${parsed.error}\nSee 'kubectl netattach --help' for usage.`);
  if (parsed.command === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  // Loaded past the help: the kubeconfig reader and the cluster client are most of a start-up.
  const [{ redactSecrets, probeServer }, { loadKubectlContext }] = await Promise.all([
    import('../kube/index.js'),
    import('./kubeconfig.js'),
  ]);
  const ctx = await loadKubectlContext({
    env: io.env,
    ...(parsed.kubeconfig !== undefined ? { kubeconfig: parsed.kubeconfig } : {}),
    ...(parsed.context !== undefined ? { context: parsed.context } : {}),
  });
  if ('error' in ctx) return fail(io, ctx.error);
  for (const warning of ctx.warnings) io.stderr(`Warning: ${warning}\n`);
  // Whatever is said from here on may quote a server, a proxy or a credential plugin: never a secret of the kubeconfig.
  const creds = ctx.credentials;
  const safe: CliIO = { ...io, stderr: (text: string) => io.stderr(redactSecrets(text, creds)) };
  const probeDone = new AbortController();
  const probe = probeServer(creds, parsed.timeoutMs, probeDone.signal);
  // Said as soon as it is known, the commands' modules loaded or not.
  // Node loads the commands' module graph (~0.4 s of CPU) without yielding to the network: a refused
  // server would be seen only after it. So the probe goes first, for at most PROBE_GRACE_MS: a
  // refused or unresolvable server answers within it; a healthy one costs no more than that.
  const early = await Promise.race([probe, delay(PROBE_GRACE_MS, 'pending' as const, { ref: false })]);
  if (typeof early === 'string' && early !== 'pending') return fail(safe, early);
  const commands = import('./kubectl-commands.js');
  const fatal = probe.then((why) => (why ? { why } : new Promise<never>(() => {})));
  const first = await Promise.race([fatal, commands]);
  if ('why' in first) return fail(safe, first.why);
  return first.runCommand(parsed, safe, { ctx, probe, probeDone });
}
