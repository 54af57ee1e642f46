// What the CLI prints reaches a terminal, and much of it comes from the cluster: NAD names and
// CNI configs, messages quoting annotation values, policy names. A namespace user who may create a
// NAD chooses those bytes, so an ESC or a C1 control in a plugin `type` must not rewrite the
// terminal of whoever runs `explain` (a window title, hidden text, a fake prompt). Every output
// passes through here and shows such characters escaped; the escapes are valid JSON (and YAML in
// double quotes, see yamlText), so json and yaml output still parse to the same values.
import { stringify, visit, parseDocument } from 'yaml';
import { oneLineSafe, terminalSafe } from '../field/index.js';
import type { CliIO } from './io.js';

/** An IO whose stdout and stderr show terminal-steering characters escaped. */
export const terminalSafeIO = (io: CliIO): CliIO => ({
  ...io,
  stdout: (text) => io.stdout(terminalSafe(text)),
  stderr: (text) => io.stderr(terminalSafe(text)),
});

/**
 * JSON text as YAML, every string that holds such a character written double-quoted: there the
 * `\uXXXX` that terminalSafe puts in its place is an escape of the same character, so the YAML
 * still reads back to the JSON's values (in a plain or single-quoted scalar it would be text).
 */
export function yamlText(json: string): string {
  const doc = parseDocument(stringify(JSON.parse(json), { lineWidth: 0 }));
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && oneLineSafe(node.value) !== node.value) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}
