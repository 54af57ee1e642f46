// Turning a manifest file (multi-document YAML, or JSON) into the NAD objects it holds.
// Pure: text in, objects or one error out. `kind: List` (and `*List`) documents are flattened.
import { yaml } from '../yaml/index.js';
import { withoutLineAndColumn, withoutQuotedText } from './json-position.js';
import { isNadObject, isObject, type JsonObject } from './object.js';

export type ManifestParse = { ok: true; nads: JsonObject[]; skipped: number } | { ok: false; error: string };

/** Parses a file's text; `json` selects JSON.parse (for `.json` files) over YAML. */
export function nadObjectsFromText(text: string, json: boolean): ManifestParse {
  let documents: unknown[];
  if (json) {
    try {
      documents = [JSON.parse(text)];
    } catch (e) {
      // The error must not echo the file, whose quoted text may span several lines.
      return { ok: false, error: firstLine(withoutLineAndColumn(withoutQuotedText(e instanceof Error ? e.message : String(e)))) };
    }
  } else {
    documents = [];
    for (const doc of yaml().parseAllDocuments(text)) {
      const problem = doc.errors[0];
      if (problem) {
        const at = problem.linePos?.[0];
        return { ok: false, error: at ? `${problem.code} at line ${at.line}, column ${at.col}` : problem.code };
      }
      try {
        documents.push(doc.toJS({ maxAliasCount: 100 }));
      } catch (e) {
        return { ok: false, error: firstLine(e) }; // unresolved alias, alias bomb
      }
    }
  }
  const nads: JsonObject[] = [];
  let skipped = 0;
  const visit = (doc: unknown): void => {
    if (Array.isArray(doc)) doc.forEach(visit);
    else if (isNadObject(doc)) nads.push(doc);
    else if (isObject(doc) && typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items))
      doc.items.forEach(visit);
    else if (doc !== null && doc !== undefined) skipped++;
  };
  documents.forEach(visit);
  return { ok: true, nads, skipped };
}

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
