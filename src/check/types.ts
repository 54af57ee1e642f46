// What `netattach check` reads and reports. The engine is pure: manifests in, findings out;
// reading files, stdin and the cluster is the shell's job (files.ts, cluster.ts, src/cli/check.ts).
import type { FieldError } from '../field/index.js';
import type { JsonPatchOperation } from '../admission/index.js';
import type { Finding } from '../policy/index.js';

/** One object found in an input: a YAML document, a JSON file, or an item of a `List`. */
export interface ManifestObject {
  /** The file as named on the command line (or found under a directory); `<stdin>` for `-`. */
  file: string;
  /** 0-based position of the document in its file. */
  index: number;
  /** 0-based position in the `items` of a `List` document. */
  item?: number;
  /** 1-based line where the object starts, when known. */
  line?: number;
  object: unknown;
}

/** A file (or a document in it) that could not be read or parsed. */
export interface ReadError {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

export interface ParsedManifests {
  objects: ManifestObject[];
  errors: ReadError[];
}

/** A denial reason: the webhook's field error, with the rule and policy when a rule produced it. */
export interface ReportedError extends FieldError {
  rule?: string;
  policy?: string;
}

/** What the mutating webhook would change in a Pod. */
export interface Mutation {
  patch: JsonPatchOperation[];
  /** Container name -> its resources after the patch, for each container the patch changes. */
  resources: Record<string, { requests?: Record<string, string>; limits?: Record<string, string> }>;
  /** The pod's nodeSelector after the patch, when the patch changes it. */
  nodeSelector?: Record<string, string>;
}

export interface ObjectResult {
  file: string;
  index: number;
  item?: number;
  line?: number;
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  /** False when the webhook would deny the object. */
  allowed: boolean;
  errors: ReportedError[];
  /** Warnings exactly as the webhook sends them (kubectl prints them as `Warning: ...`). */
  warnings: string[];
  /** Findings of policy rules in Audit mode (the webhook only logs them). */
  audits: ReportedError[];
  /** Why the webhook would not see this object at all (namespace excluded, not a Kubernetes object). */
  skipped?: string;
  mutation?: Mutation;
  /** Every finding with its policy, rule and action, as the core gave them (not rendered; `kubectl netattach explain` reads them). */
  findings?: Finding[];
}

export interface CheckSummary {
  objects: number;
  denied: number;
  errors: number;
  warnings: number;
  skipped: number;
  readErrors: number;
}

/** How a network's device is served (`--cluster`): device plugin, DeviceClass (DRA), or explicit claims. */
export interface NetworkPathResult {
  namespace: string;
  name: string;
  path: string;
  summary: string;
  problems: string[];
}

export interface CheckReport {
  results: ObjectResult[];
  readErrors: ReadError[];
  summary: CheckSummary;
  /** `--cluster` only: every NAD with a device, and which way it is served. */
  networks?: NetworkPathResult[];
}
