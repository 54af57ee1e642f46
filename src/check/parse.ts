// Manifest text -> objects: multi-document YAML (JSON is YAML, so one parser serves both and
// every syntax error gets a line and column). `List` documents (`kubectl get -o yaml`) are
// flattened. Pure. A file with a syntax error yields no objects: half a file would make NADs
// vanish and report pods against them, and kubectl would refuse the file anyway.
import type * as Yaml from 'yaml';
import { yaml } from '../yaml/index.js';
import type { ManifestObject, ParsedManifests, ReadError } from './types.js';

/** Aliases a document may expand: enough for real manifests, not for an alias bomb. */
const MAX_ALIAS_COUNT = 100;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isList = (v: unknown): v is { kind: string; items: unknown[] } =>
  isObject(v) && typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);

export function parseManifests(text: string, file: string): ParsedManifests {
  const { LineCounter, parseAllDocuments } = yaml();
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter: lines, prettyErrors: true });
  const objects: ManifestObject[] = [];
  const errors: ReadError[] = [];
  // parseAllDocuments returns an EmptyStream (an array) for a file without documents.
  for (const [index, doc] of [...documents].entries()) {
    const problem = doc.errors[0];
    if (problem) {
      const at = problem.linePos?.[0];
      errors.push({ file, ...(at ? { line: at.line, column: at.col } : {}), message: firstLine(problem.message) });
      continue;
    }
    let data: unknown;
    try {
      data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      errors.push({ file, ...lineOf(doc.contents?.range?.[0], lines), message: firstLine(e instanceof Error ? e.message : String(e)) });
      continue;
    }
    if (data === null || data === undefined) continue; // empty document (a trailing `---`, comments only)
    const start = lineOf(doc.contents?.range?.[0], lines);
    if (isList(data)) {
      const itemNodes = itemsNode(doc);
      data.items.forEach((object, item) => {
        objects.push({ file, index, item, ...lineOf(itemNodes?.[item], lines), object });
      });
    } else {
      objects.push({ file, index, ...start, object: data });
    }
  }
  // A file with any broken document is not used at all (see above).
  return errors.length > 0 ? { objects: [], errors } : { objects, errors };
}

/** Start offsets of the items of a List document's `items` sequence. */
function itemsNode(doc: Yaml.Document): Array<number | undefined> | undefined {
  if (!yaml().isMap(doc.contents)) return undefined;
  const items = doc.contents.get('items', true);
  return yaml().isSeq(items) ? items.items.map((n) => (n as { range?: [number, number, number] } | null)?.range?.[0]) : undefined;
}

function lineOf(offset: number | undefined, lines: Yaml.LineCounter): { line?: number } {
  return offset === undefined ? {} : { line: lines.linePos(offset).line };
}

/** The message without its position suffix (` at line 3, column 5:`): the position is reported apart. */
const firstLine = (message: string): string =>
  message
    .split('\n')[0]!
    .replace(/ at line \d+, column \d+:?$/, '')
    .trim();
