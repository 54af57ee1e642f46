// Kubernetes name syntaxes (k8s.io/apimachinery/pkg/util/validation), each returning the
// reasons a value is wrong (empty when valid), so callers can wrap them in field errors.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;

/** The shape of most of these checks: a length limit, then a pattern with its explanation. */
function lengthAndPattern(value: string, max: number, pattern: RegExp, explanation: string): string[] {
  const out: string[] = [];
  if (value.length > max) out.push(`must be no more than ${max} characters`);
  if (!pattern.test(value)) out.push(explanation);
  return out;
}

export const dns1123Label = (value: string): string[] =>
  lengthAndPattern(
    value,
    DNS1123_LABEL_MAX,
    DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
  );

export const dns1123Subdomain = (value: string): string[] =>
  lengthAndPattern(
    value,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
  );

/** `[prefix/]name`, the syntax of label keys, annotation keys and resource names. */
export function qualifiedName(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const out: string[] = [];
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else out.push(...dns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else {
    const reasons = lengthAndPattern(
      name,
      QUALIFIED_NAME_MAX,
      QUALIFIED_NAME_PART,
      "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')",
    );
    out.push(...reasons.map((m) => `name part ${m}`));
  }
  return out;
}

export const labelValue = (value: string): string[] =>
  lengthAndPattern(
    value,
    LABEL_VALUE_MAX,
    LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')",
  );

/**
 * Kubernetes' IsExtendedResourceName: `domain/name`, not in the `kubernetes.io/` namespace,
 * not starting with `requests.`, and still a qualified name once the quota prefix `requests.`
 * is put in front (so the domain may be at most 244 characters).
 */
export function extendedResourceName(value: string): string[] {
  // Every review asks this of each of its NADs' resource names, nearly always valid ones: one
  // pattern and three comparisons say so without building the reasons (bench/profile.ts).
  if (isPlainExtendedResourceName(value)) return [];
  if (!value.includes('/')) return ["must be a domain-prefixed name ('domain/name', e.g. 'intel.com/sriov_netdevice')"];
  if (value.includes('kubernetes.io/')) return ["must not be in the 'kubernetes.io/' namespace, reserved for native resources"];
  if (value.startsWith('requests.')) return ["must not start with 'requests.', reserved for quota"];
  const reasons = qualifiedName(value);
  if (reasons.length > 0) return reasons;
  if (qualifiedName(`requests.${value}`).length > 0) {
    return [
      `domain must be no more than ${DNS1123_SUBDOMAIN_MAX - 'requests.'.length} characters, to leave room for the quota prefix 'requests.'`,
    ];
  }
  return [];
}

/** `subdomain/name` in one pattern; the lengths and the reserved prefixes are checked beside it. */
const EXTENDED_RESOURCE_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** A sufficient test: true only for names extendedResourceName accepts (false sends a name to the full check). */
function isPlainExtendedResourceName(value: string): boolean {
  const slash = value.indexOf('/');
  return (
    slash > 0 &&
    slash <= DNS1123_SUBDOMAIN_MAX - 'requests.'.length &&
    value.length - slash - 1 <= QUALIFIED_NAME_MAX &&
    !value.startsWith('requests.') &&
    !value.includes('kubernetes.io/') &&
    EXTENDED_RESOURCE_NAME.test(value)
  );
}
