// Generated blocks in the docs: the text between two markers, rendered from the project's data
// (a JSON Schema, the plugin table), replaced in place. scripts/gen.ts runs every generator;
// test/scripts/gen.test.ts keeps each doc equal to what they render.

/** `markdown` with the text between `begin` and `end` (markers included) replaced by `block`. */
export function replaceGenerated(markdown: string, begin: string, end: string, block: string): string {
  const a = markdown.indexOf(begin);
  const b = markdown.indexOf(end);
  if (a < 0 || b < a) throw new Error(`markers of the generated block not found: ${begin}`);
  return markdown.slice(0, a) + block + markdown.slice(b + end.length);
}
