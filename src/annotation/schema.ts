// ajv, compiled once at module load from schemas/network-selection.schema.json, and the
// translation of its errors into Kubernetes field errors with our paths and our wording.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { loadSchema } from '../schemas/index.js';
import { child, index, invalid, required, unsupported, type FieldError } from '../field/index.js';
import { FORMATS, PORT_PROTOCOLS } from './formats.js';

export const NETWORK_SELECTION_SCHEMA_FILE = 'network-selection.schema.json';

// verbose: errors carry their schema node, so a range error can name both bounds.
const ajv = new Ajv({ allErrors: true, strict: true, verbose: true });
for (const [name, problem] of Object.entries(FORMATS)) {
  ajv.addFormat(name, { type: 'string', validate: (text: string) => problem(text) === undefined });
}
const schema = loadSchema(NETWORK_SELECTION_SCHEMA_FILE);
ajv.addSchema(schema);
const validateElement: ValidateFunction = ajv.getSchema(`${String(schema.$id)}#/definitions/networkSelection`) ?? fail();

function fail(): never {
  throw new Error(`netattach: ${NETWORK_SELECTION_SCHEMA_FILE} has no definitions/networkSelection`);
}

const TYPE_REASONS: Record<string, string> = {
  string: 'must be a string',
  integer: 'must be an integer',
  array: 'must be a JSON array',
  object: 'must be a JSON object',
};

/** Field path of an ajv instancePath (`/portMappings/1/hostPort`) below `base`, and the value there. */
function locate(base: string, root: unknown, pointer: string): { path: string; value: unknown } {
  let path = base;
  let value = root;
  if (pointer === '') return { path, value };
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) {
      path = index(path, Number(segment));
      value = value[Number(segment)];
    } else {
      // The sender's key: cut in the path like a value (src/field/path.ts).
      path = child(path, segment);
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined;
    }
  }
  return { path, value };
}

function translate(base: string, root: unknown, e: ErrorObject): FieldError {
  const { path, value } = locate(base, root, e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return required(`${path}.${String(p.missingProperty)}`, '');
    case 'type':
      return invalid(path, value, TYPE_REASONS[String(p.type)] ?? `must be of type ${String(p.type)}`);
    case 'format': {
      const format = String(p.format);
      const text = String(value);
      if (format === 'port-protocol') return unsupported(path, value, PORT_PROTOCOLS, 'supported values: "TCP", "UDP", "SCTP" (any case)');
      return invalid(path, value, FORMATS[format]?.(text) ?? `must be a valid ${format}`);
    }
    case 'minimum':
    case 'maximum': {
      const schemaNode = (e.parentSchema ?? {}) as { minimum?: number; maximum?: number };
      return invalid(path, value, `must be between ${schemaNode.minimum ?? '-inf'} and ${schemaNode.maximum ?? 'inf'}`);
    }
    case 'minLength':
      return required(path, 'must not be empty');
    case 'additionalProperties':
      return invalid(child(path, String(p.additionalProperty)), undefined, 'unknown key');
    default:
      return invalid(path, value, `does not satisfy the schema rule "${e.keyword}"`);
  }
}

/**
 * Validates one normalized element against the schema; errors carry paths below `base`. The
 * keywords translated are the ones the schema uses; any other gets a generic message.
 */
export function schemaErrors(base: string, element: unknown): FieldError[] {
  if (validateElement(element)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of validateElement.errors ?? []) {
    const fe = translate(base, element, e);
    if (seen.has(fe.path)) continue; // one error per field is enough (minLength and format, say)
    seen.add(fe.path);
    out.push(fe);
  }
  return out;
}
