// ajv validation of policy documents against schemas/network-attachment-policy.schema.json,
// compiled once; ajv errors become Kubernetes-style field errors.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../field/index.js';
import { child, forbidden, invalid, required, unsupported } from '../field/index.js';
import { loadSchema } from '../schemas/index.js';
import type { PolicyDocument } from './document.js';

export const POLICY_SCHEMA_FILE = 'network-attachment-policy.schema.json';

// ajv-formats is CommonJS: under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile<PolicyDocument>(loadSchema(POLICY_SCHEMA_FILE));

function fieldPath(instancePath: string): string {
  let out = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out = /^\d+$/.test(seg) ? `${out}[${seg}]` : child(out, seg);
  }
  return out;
}

function valueAt(data: unknown, instancePath: string): unknown {
  let v = data;
  for (const raw of instancePath.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return v;
}

function toFieldError(e: ErrorObject, data: unknown): FieldError {
  const path = fieldPath(e.instancePath);
  const value = valueAt(data, e.instancePath);
  switch (e.keyword) {
    case 'required':
      return required(child(path, String((e.params as { missingProperty: string }).missingProperty)));
    case 'additionalProperties':
      return forbidden(child(path, String((e.params as { additionalProperty: string }).additionalProperty)), 'unknown field');
    case 'enum':
      return unsupported(path, value, (e.params as { allowedValues: unknown[] }).allowedValues.map(String));
    default:
      return invalid(path, value, e.message ?? e.keyword);
  }
}

/** Schema check of one parsed document: the typed document, or field errors. */
export function validatePolicyDocument(data: unknown): { document?: PolicyDocument; errors: FieldError[] } {
  if (validate(data)) return { document: data, errors: [] };
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const e of validate.errors ?? []) {
    const fe = toFieldError(e, data);
    const key = `${fe.path}|${fe.type}|${fe.reason}`;
    if (!seen.has(key)) {
      seen.add(key);
      errors.push(fe);
    }
  }
  return { errors };
}
