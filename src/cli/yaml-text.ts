// YAML output of the CLI whose escapes survive terminalSafe (terminal.ts): apart from it so that
// the shell that every command passes through does not load the YAML library.
import { stringify, visit, parseDocument } from 'yaml';
import { oneLineSafe } from '../field/index.js';

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
