// Generated blocks in the docs: a block between two markers, rendered from the project's data
// (a JSON Schema, the plugin table), is replaced in place; a test keeps each doc equal to it.
import { readFileSync, writeFileSync } from 'node:fs';

/** `markdown` with the text between `begin` and `end` (markers included) replaced by `block`. */
export function replaceGenerated(markdown: string, begin: string, end: string, block: string): string {
  const a = markdown.indexOf(begin);
  const b = markdown.indexOf(end);
  if (a < 0 || b < a) throw new Error(`markers of the generated block not found: ${begin}`);
  return markdown.slice(0, a) + block + markdown.slice(b + end.length);
}

/** The command-line face of a generator: print the block, or rewrite `file` in place. */
export function writeGenerated(file: string | undefined, block: string, replace: (markdown: string) => string): void {
  if (!file) process.stdout.write(block + '\n');
  else writeFileSync(file, replace(readFileSync(file, 'utf8')));
}
