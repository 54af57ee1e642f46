// `kubectl netattach` arguments, the way kubectl users type them: flags before or after the
// subcommand (`-n NS`, `--namespace=NS`, `-oyaml`, `-f FILE`, `-A`, `--kubeconfig`, `--context`,
// `--request-timeout`, `--as`/`--as-group`). Pure: argv in, a plan or a usage error out.
import { parseArgs } from 'node:util';
import type { UserInfo } from '../admission/index.js';

export const PLUGIN_COMMANDS = ['explain', 'check', 'audit'] as const;
export type PluginCommand = (typeof PLUGIN_COMMANDS)[number];

/** Formats each subcommand prints; the first is the default. `wide` adds detail to the default. */
export const OUTPUTS: Readonly<Record<PluginCommand, readonly string[]>> = {
  explain: ['describe', 'wide', 'json', 'yaml'],
  check: ['text', 'wide', 'json', 'yaml'],
  audit: ['table', 'wide', 'json', 'yaml'],
};

export interface PluginArgs {
  command: PluginCommand | 'help';
  /** explain: the pod named on the command line (`pod NAME` or `pod/NAME`). */
  pod?: string;
  /** explain: a KubeVirt VM or VMI named on the command line (`vm NAME`, `vmi/NAME`): its launcher pod is explained. */
  vm?: { resource: 'virtualmachines' | 'virtualmachineinstances'; name: string };
  files: string[];
  /** `-n`: else the context's namespace. */
  namespace?: string;
  allNamespaces: boolean;
  output: string;
  kubeconfig?: string;
  context?: string;
  timeoutMs: number;
  /** `--as`/`--as-group`: who creates the pod, as policies see it (not impersonation: nothing is written). */
  userInfo?: UserInfo;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const POD_WORDS = new Set(['pod', 'pods', 'po']);
const VM_WORDS: ReadonlyMap<string, 'virtualmachines' | 'virtualmachineinstances'> = new Map([
  ...['vm', 'vms', 'virtualmachine', 'virtualmachines'].map((w) => [w, 'virtualmachines'] as const),
  ...['vmi', 'vmis', 'virtualmachineinstance', 'virtualmachineinstances'].map((w) => [w, 'virtualmachineinstances'] as const),
]);

/** kubectl's `--request-timeout`: a number of seconds or one with a unit (`500ms`, `10s`, `1m`, `1h`); 0 is not a bound here. */
export function parseTimeout(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's']!;
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

export function parsePluginArgs(argv: readonly string[]): PluginArgs | { error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        'all-namespaces': { type: 'boolean', short: 'A' },
        output: { type: 'string', short: 'o' },
        filename: { type: 'string', short: 'f', multiple: true },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'request-timeout': { type: 'string' },
        as: { type: 'string' },
        'as-group': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  const { values: v, positionals } = parsed;
  const [word, ...rest] = positionals;
  if (v.help || word === undefined || word === 'help')
    return { command: 'help', files: [], allNamespaces: false, output: '', timeoutMs: DEFAULT_TIMEOUT_MS };
  if (!(PLUGIN_COMMANDS as readonly string[]).includes(word))
    return { error: `unknown command ${JSON.stringify(word)}: one of ${PLUGIN_COMMANDS.join(', ')}` };
  const command = word as PluginCommand;
  const output = v.output ?? OUTPUTS[command][0]!;
  if (!OUTPUTS[command].includes(output))
    return { error: `-o/--output: ${JSON.stringify(output)} is not one of ${OUTPUTS[command].slice(1).join(', ')} for ${command}` };
  for (const [flag, value] of [
    ['--namespace', v.namespace],
    ['--context', v.context],
    ['--kubeconfig', v.kubeconfig],
    ['--as', v.as],
  ] as const) {
    if (value === '') return { error: `${flag} must not be empty` };
  }
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (v['request-timeout'] !== undefined) {
    const t = parseTimeout(v['request-timeout']);
    if (t === undefined)
      return { error: `--request-timeout: ${JSON.stringify(v['request-timeout'])} is not a positive duration (e.g. 10s, 1m)` };
    timeoutMs = t;
  }
  const files = v.filename ?? [];
  if (v['all-namespaces'] && command !== 'audit') return { error: `-A/--all-namespaces applies to audit, not ${command}` };

  let pod: string | undefined;
  let vm: PluginArgs['vm'];
  const [vmWord, slashName] =
    rest.length === 1 && rest[0]!.includes('/')
      ? [rest[0]!.slice(0, rest[0]!.indexOf('/')), rest[0]!.slice(rest[0]!.indexOf('/') + 1)]
      : [rest[0], rest[1]];
  if (command === 'explain' && vmWord !== undefined && VM_WORDS.has(vmWord) && slashName !== undefined && rest.length <= 2) {
    if (slashName === '') return { error: 'explain: the VM name must not be empty' };
    if (files.length > 0) return { error: 'explain takes either "vm NAME" or -f FILE' };
    vm = { resource: VM_WORDS.get(vmWord)!, name: slashName };
  } else if (command === 'explain') {
    if (rest.length === 1 && /^(pods?|po)\//.test(rest[0]!)) pod = rest[0]!.slice(rest[0]!.indexOf('/') + 1);
    else if (rest.length === 2 && POD_WORDS.has(rest[0]!)) pod = rest[1];
    else if (rest.length > 0)
      return { error: `explain takes "pod NAME", "vm NAME", "vmi NAME" or -f FILE, not ${JSON.stringify(rest.join(' '))}` };
    if (pod === '') return { error: 'explain: the pod name must not be empty' };
    if ((pod === undefined) === (files.length === 0)) return { error: 'explain takes either "pod NAME" or -f FILE' };
  } else if (rest.length > 0) {
    return {
      error: `${command} takes no arguments, got ${JSON.stringify(rest.join(' '))}${command === 'check' ? ' (give files with -f)' : ''}`,
    };
  }
  if (command === 'check' && files.length === 0) return { error: "check needs -f FILE (a file, a directory, or '-' for stdin)" };
  if (command === 'audit' && files.length > 0) return { error: 'audit reads the cluster; for files use "netattach audit PATH"' };
  if (files.filter((f) => f === '-').length > 1) return { error: '-f - (stdin) may be given only once' };

  const userInfo: UserInfo | undefined =
    v.as !== undefined || v['as-group'] !== undefined
      ? { ...(v.as !== undefined ? { username: v.as } : {}), ...(v['as-group'] ? { groups: v['as-group'] } : {}) }
      : undefined;
  return {
    command,
    ...(pod !== undefined ? { pod } : {}),
    ...(vm !== undefined ? { vm } : {}),
    files,
    ...(v.namespace !== undefined ? { namespace: v.namespace } : {}),
    allNamespaces: v['all-namespaces'] === true,
    output,
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    ...(v.context !== undefined ? { context: v.context } : {}),
    timeoutMs,
    ...(userInfo ? { userInfo } : {}),
  };
}
