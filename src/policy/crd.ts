// The CustomResourceDefinition of NetworkAttachmentPolicy, derived from the JSON Schema so that
// one schema serves ajv, the CRD and the docs. Kubernetes wants a structural schema: no $ref,
// $schema or $id; `additionalProperties` never beside `properties` (the apiserver prunes unknown
// fields instead; ajv still rejects them in files); `metadata` only as `type: object`.
// Regenerate the manifest: npm run gen (scripts/gen.ts)
import { yaml } from '../yaml/index.js';
import { loadSchema } from '../schemas/index.js';
import { POLICY_GROUP, POLICY_KIND, POLICY_PLURAL, POLICY_VERSION } from './document.js';
import { POLICY_SCHEMA_FILE } from './schema.js';

type Schema = Record<string, unknown>;

/** Keywords of JSON Schema that a CRD's openAPIV3Schema rejects or does not know. */
export const DROPPED_KEYWORDS = ['$schema', '$id', '$comment', 'examples', 'title'] as const;

export function toStructural(schema: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if ((DROPPED_KEYWORDS as readonly string[]).includes(k)) continue;
    if (k === 'additionalProperties') {
      if (v === false) continue;
      if (schema.properties !== undefined) throw new Error('additionalProperties beside properties cannot be expressed in a CRD schema');
      out[k] = typeof v === 'object' && v !== null ? toStructural(v as Schema) : v;
    } else if (k === 'properties') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, Schema>).map(([name, s]) => [name, toStructural(s)]));
    } else if (k === 'items') {
      out[k] = toStructural(v as Schema);
    } else if (
      k === '$ref' ||
      k === 'definitions' ||
      k === 'patternProperties' ||
      k === 'oneOf' ||
      k === 'anyOf' ||
      k === 'allOf' ||
      k === 'not' ||
      k === 'const'
    ) {
      throw new Error(`keyword ${k} is not supported by the CRD derivation`);
    } else out[k] = v;
  }
  return out;
}

/** The whole-object schema as a CRD openAPIV3Schema. */
export function crdSchema(): Schema {
  const root = toStructural(loadSchema(POLICY_SCHEMA_FILE));
  const props = root.properties as Record<string, Schema>;
  // The apiserver owns metadata and apiVersion/kind; a CRD may only say they are there.
  props.metadata = { type: 'object' };
  props.apiVersion = { type: 'string', description: 'netattach.io/v1alpha1' };
  props.kind = { type: 'string', description: POLICY_KIND };
  root.required = ['spec'];
  return root;
}

const acceptedColumn = (name: string, field: string, priority?: number): Schema => ({
  name,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="Accepted")].${field}`,
  ...(priority ? { priority } : {}),
});

export function policyCrd(): Schema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${POLICY_PLURAL}.${POLICY_GROUP}`, labels: { 'app.kubernetes.io/name': 'netattach' } },
    spec: {
      group: POLICY_GROUP,
      scope: 'Cluster',
      names: {
        kind: POLICY_KIND,
        listKind: `${POLICY_KIND}List`,
        plural: POLICY_PLURAL,
        singular: POLICY_KIND.toLowerCase(),
        shortNames: ['nap'],
        categories: ['netattach'],
      },
      versions: [
        {
          name: POLICY_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Action', type: 'string', jsonPath: '.spec.action', description: 'Default action of its rules (empty: Enforce)' },
            acceptedColumn('Accepted', 'status'),
            acceptedColumn('Reason', 'reason'),
            acceptedColumn('Message', 'message', 1),
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: crdSchema() },
        },
      ],
    },
  };
}

export const CRD_HEADER = '# Generated from schemas/network-attachment-policy.schema.json by src/policy/crd.ts: do not edit.\n';

export const renderPolicyCrd = (): string => CRD_HEADER + yaml().stringify(policyCrd(), { lineWidth: 0 });
