// Structural check of an incoming AdmissionReview: enough to trust the fields the core reads.
// The object inside is not checked here: the review reports its problems as field errors.
import { invalid, required, renderErrors, tooLong, unsupported, type FieldError } from '../field/index.js';
import { isObject, type JsonObject } from './object.js';
import { ADMISSION_V1, ADMISSION_V1BETA1, type AdmissionReview } from './types.js';

const VERSIONS = [ADMISSION_V1, ADMISSION_V1BETA1];

/**
 * Bytes of `request.uid`. The apiserver sends a UUID (36 characters, a fresh one per call); the
 * response must echo it, and every log line about the review carries it, so a longer one (a forged
 * review's 3.5 MB uid was echoed whole) is refused. 256 leaves room for any tool's own uids.
 */
export const MAX_UID_BYTES = 256;
const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export type DecodeResult = { ok: true; review: AdmissionReview } | { ok: false; error: string };

export function decodeReview(body: unknown): DecodeResult {
  const errors: FieldError[] = [];
  if (!isObject(body)) return { ok: false, error: renderErrors([invalid('<body>', typeOf(body), 'must be an AdmissionReview object')]) };
  if (!VERSIONS.includes(body['apiVersion'] as string)) errors.push(unsupported('apiVersion', body['apiVersion'], VERSIONS));
  if (body['kind'] !== 'AdmissionReview') errors.push(unsupported('kind', body['kind'], ['AdmissionReview']));
  const request = body['request'];
  if (!isObject(request))
    errors.push(request === undefined ? required('request') : invalid('request', typeOf(request), 'must be an object'));
  else checkRequest(request, errors);
  if (errors.length > 0) return { ok: false, error: renderErrors(errors) };
  return { ok: true, review: body as unknown as AdmissionReview };
}

function checkRequest(r: JsonObject, errors: FieldError[]): void {
  const str = (name: string, opts: { required?: boolean; empty?: boolean } = {}) => {
    const v = r[name];
    const path = `request.${name}`;
    if (v === undefined || v === null) {
      if (opts.required) errors.push(required(path));
    } else if (typeof v !== 'string') errors.push(invalid(path, typeOf(v), 'must be a string'));
    else if (opts.required && !opts.empty && v === '') errors.push(required(path));
  };
  str('uid', { required: true });
  const uid = r['uid'];
  // Measured in bytes only when it could be too long (a UTF-16 unit is at most 3 bytes).
  if (typeof uid === 'string' && uid.length * 3 > MAX_UID_BYTES && (uid.length > MAX_UID_BYTES || Buffer.byteLength(uid) > MAX_UID_BYTES)) {
    errors.push(tooLong('request.uid', typeOf(uid), MAX_UID_BYTES));
  }
  triple(r, 'kind', ['group', 'version', 'kind'], true, errors);
  triple(r, 'resource', ['group', 'version', 'resource'], true, errors);
  triple(r, 'requestKind', ['group', 'version', 'kind'], false, errors);
  triple(r, 'requestResource', ['group', 'version', 'resource'], false, errors);
  str('subResource');
  str('name');
  str('namespace');
  const op = r['operation'];
  if (op === undefined) errors.push(required('request.operation'));
  else if (!OPERATIONS.includes(op as string)) errors.push(unsupported('request.operation', op, OPERATIONS));
  const user = r['userInfo'];
  if (user === undefined) errors.push(required('request.userInfo'));
  else if (!isObject(user)) errors.push(invalid('request.userInfo', typeOf(user), 'must be an object'));
  else {
    for (const f of ['username', 'uid'])
      if (user[f] !== undefined && typeof user[f] !== 'string')
        errors.push(invalid(`request.userInfo.${f}`, typeOf(user[f]), 'must be a string'));
    const groups = user['groups'];
    if (groups !== undefined && groups !== null && !(Array.isArray(groups) && groups.every((g) => typeof g === 'string'))) {
      errors.push(invalid('request.userInfo.groups', typeOf(groups), 'must be a list of strings'));
    }
  }
  for (const f of ['object', 'oldObject']) {
    const v = r[f];
    if (v !== undefined && v !== null && !isObject(v)) errors.push(invalid(`request.${f}`, typeOf(v), 'must be an object or null'));
  }
  if (r['dryRun'] !== undefined && r['dryRun'] !== null && typeof r['dryRun'] !== 'boolean') {
    errors.push(invalid('request.dryRun', typeOf(r['dryRun']), 'must be a boolean'));
  }
}

function triple(r: JsonObject, name: string, fields: readonly string[], mandatory: boolean, errors: FieldError[]): void {
  const v = r[name];
  const path = `request.${name}`;
  if (v === undefined || v === null) {
    if (mandatory) errors.push(required(path));
    return;
  }
  if (!isObject(v)) {
    errors.push(invalid(path, typeOf(v), 'must be an object'));
    return;
  }
  for (const f of fields) {
    const x = v[f];
    // The core group is "" (an encoder may omit it); version and kind/resource may not be empty.
    if (f === 'group' && (x === undefined || x === '')) continue;
    if (typeof x !== 'string' || x === '')
      errors.push(x === undefined ? required(`${path}.${f}`) : invalid(`${path}.${f}`, typeOf(x), 'must be a non-empty string'));
  }
}

/** The type of a bad value, not the value itself: a decode error must not echo a whole object back. */
function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return v.length > 40 ? `string(${v.length} chars)` : v;
  return typeof v === 'object' ? 'object' : String(v);
}
