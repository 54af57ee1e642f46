// `netattach parse [--namespace NS] [--default-network] [--output json|text] VALUE`: parses and
// validates an annotation value offline. `-` reads the value from stdin; `--` ends the options.
import {
  DEFAULT_MULTUS_NAMESPACE,
  parseDefaultNetwork,
  parseNetworks,
  serializeSelections,
  type NetworkSelection,
} from '../annotation/index.js';
import { renderError } from '../field/index.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, parseCommandLine, readAll, type CliIO } from './io.js';

export const USAGE = `Usage: netattach parse [--namespace NS] [--default-network] [--output json|text] VALUE

Parses and validates a k8s.v1.cni.cncf.io/networks annotation value (or, with
--default-network, a v1.multus-cni.io/default-network value).

  VALUE                  the annotation value; '-' reads it from stdin; put '--' before
                         a value that starts with '-'
  -n, --namespace NS     namespace for unqualified names (default: "default";
                         with --default-network: "${DEFAULT_MULTUS_NAMESPACE}", Multus's namespace)
  -d, --default-network  parse a default-network value (exactly one network)
  -o, --output FORMAT    json (default): the normalized selections as a JSON array;
                         text: one line per selection
  -h, --help             show this help

Exit status: 0 valid (warnings on stderr), 1 invalid (one problem per line on stderr), 2 usage error.
`;

/** One human-readable line per selection: `ns/name@if key=value ...`. */
export function textLine(s: NetworkSelection): string {
  const parts = [`${s.namespace}/${s.name}${s.interface ? `@${s.interface}` : ''}`];
  const src = s as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(src)) {
    if (k === 'name' || k === 'namespace' || k === 'interface') continue;
    parts.push(
      `${k}=${Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(',') : typeof v === 'string' ? v : JSON.stringify(v)}`,
    );
  }
  return parts.join(' ');
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCommandLine('parse', USAGE, io, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      'default-network': { type: 'boolean', short: 'd' },
      output: { type: 'string', short: 'o', default: 'json' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const output = values.output ?? 'json';
  if (output !== 'json' && output !== 'text') {
    io.stderr(`netattach parse: --output must be json or text, not ${JSON.stringify(output)}\n`);
    return EXIT_USAGE;
  }
  if (positionals.length !== 1) {
    io.stderr(`netattach parse: expected exactly one VALUE, got ${positionals.length}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.namespace !== undefined && values.namespace === '') {
    io.stderr('netattach parse: --namespace must not be empty\n');
    return EXIT_USAGE;
  }
  const value = positionals[0] === '-' ? await readAll(io.stdin) : positionals[0]!;
  const result = values['default-network']
    ? parseDefaultNetwork(value, { defaultNamespace: values.namespace ?? DEFAULT_MULTUS_NAMESPACE })
    : parseNetworks(value, { namespace: values.namespace ?? 'default' });

  for (const w of result.warnings) io.stderr(`warning: ${renderError(w)}\n`);
  if (result.errors.length > 0) {
    for (const e of result.errors) io.stderr(`${renderError(e)}\n`);
    return EXIT_FINDINGS;
  }
  if (output === 'json') io.stdout(`${serializeSelections(result.networks, 2)}\n`);
  else for (const n of result.networks) io.stdout(`${textLine(n.selection)}\n`);
  return EXIT_OK;
}
