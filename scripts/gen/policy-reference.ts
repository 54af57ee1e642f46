// The field reference of docs/policy.md, rendered from the JSON Schema (the docs' single source).
// Regenerate in place: npm run gen (scripts/gen.ts).
import { POLICY_SCHEMA_FILE } from '../../src/policy/index.js';
import { loadSchema } from '../../src/schemas/index.js';
import { replaceGenerated } from './blocks.js';

type Schema = Record<string, unknown>;
export const REFERENCE_BEGIN = '<!-- BEGIN GENERATED REFERENCE (scripts/gen/policy-reference.ts) -->';
export const REFERENCE_END = '<!-- END GENERATED REFERENCE -->';

function typeOf(s: Schema): string {
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.type === 'array') return `${typeOf((s.items as Schema) ?? {})}[]`;
  if (s.type === 'object' && typeof s.additionalProperties === 'object') return `map of ${typeOf(s.additionalProperties as Schema)}`;
  return String(s.type ?? 'any');
}

function constraints(s: Schema): string {
  const c: string[] = [];
  if (s.pattern) c.push(`pattern \`${String(s.pattern)}\``);
  if (s.minimum !== undefined) c.push(`≥ ${String(s.minimum)}`);
  if (s.maximum !== undefined) c.push(`≤ ${String(s.maximum)}`);
  if (s.minItems !== undefined) c.push(`at least ${String(s.minItems)} item(s)`);
  return c.length ? ` (${c.join(', ')})` : '';
}

export function renderPolicyReference(): string {
  const rows: string[] = ['| field | type | required | description |', '|---|---|---|---|'];
  const walk = (s: Schema, path: string, required: boolean): void => {
    if (path && path !== 'status' && path !== 'metadata' && !path.endsWith('[]')) {
      const fallback = path.endsWith('.action') && path !== 'spec.action' ? 'Action of this rule; default spec.action.' : '';
      const desc = String(s.description ?? fallback).replaceAll('|', '\\|');
      rows.push(`| \`${path}\` | ${typeOf(s)} | ${required ? 'yes' : ''} | ${desc}${constraints(s)} |`);
    }
    if (path === 'status') return;
    const req = new Set((s.required as string[]) ?? []);
    for (const [k, v] of Object.entries((s.properties as Record<string, Schema>) ?? {})) walk(v, path ? `${path}.${k}` : k, req.has(k));
    if (s.type === 'array' && (s.items as Schema)?.properties) walk(s.items as Schema, `${path}[]`, false);
  };
  walk(loadSchema(POLICY_SCHEMA_FILE), '', true);
  return `${REFERENCE_BEGIN}\n${rows.join('\n')}\n${REFERENCE_END}`;
}

/** Replaces the generated block of a markdown text. */
export const withPolicyReference = (markdown: string): string =>
  replaceGenerated(markdown, REFERENCE_BEGIN, REFERENCE_END, renderPolicyReference());
