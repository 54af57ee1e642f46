// Reading kubeconfig files as kubectl reads them, with the `yaml` package (not
// @kubernetes/client-node: importing it cost ~0.9 s and ~127 MB, and it dropped fields). Files
// are merged as clientcmd merges them (the first file to name a cluster, user or context wins; the
// first non-empty current-context wins); relative paths are relative to the file naming them.
// Only the chosen context's cluster and user are validated, as kubectl does. Every field kubectl
// honours is kept (KubeconfigCluster, KubeconfigUser); one this project cannot honour is refused by
// the caller, naming it. Errors are data ({path, value, reason}) and never carry a secret's value.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { yaml } from '../yaml/index.js';

/** A problem with one field of the kubeconfig; `value` is absent for secrets (and for missing fields). */
export interface KubeconfigProblem {
  /** The file the field is in (or the files, for a problem of the merged config). */
  file: string;
  /** e.g. `users[0].user.client-key` (index within that file, as in an editor). */
  path: string;
  value?: string;
  reason: string;
}

export class KubeconfigError extends Error {
  constructor(readonly problem: KubeconfigProblem) {
    super(renderKubeconfigProblem(problem));
    this.name = 'KubeconfigError';
  }
}

export function renderKubeconfigProblem(p: KubeconfigProblem): string {
  return `kubeconfig ${p.file}: ${p.path ? `${p.path}: ` : ''}${p.value !== undefined ? `${JSON.stringify(p.value)}: ` : ''}${p.reason}`;
}

/** Fields whose values are secrets: said by name only, never by value. */
export const SECRET_USER_FIELDS: ReadonlySet<string> = new Set([
  'token',
  'password',
  'client-key-data',
  'client-certificate-data',
  'auth-provider',
  'exec',
]);

export const CLUSTER_FIELDS = [
  'server',
  'tls-server-name',
  'insecure-skip-tls-verify',
  'certificate-authority',
  'certificate-authority-data',
  'proxy-url',
  'disable-compression',
  'extensions',
] as const;
export const USER_FIELDS = [
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'token',
  'tokenFile',
  'as',
  'as-uid',
  'as-groups',
  'as-user-extra',
  'username',
  'password',
  'auth-provider',
  'exec',
  'extensions',
] as const;

/** Where a value was read: its file and its path there (for messages and relative paths). */
interface Origin {
  file: string;
  path: string;
}

export interface KubeconfigCluster {
  origin: Origin;
  server: string;
  tlsServerName?: string;
  insecureSkipTLSVerify: boolean;
  /** certificate-authority-data (decoded), else the certificate-authority file's content. */
  ca?: Buffer;
  proxyUrl?: string;
  disableCompression: boolean;
}

export interface KubeconfigUser {
  origin: Origin;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  /** Absolute; re-read as it rotates (as client-go does). */
  tokenFile?: string;
  as?: string;
  asUid?: string;
  asGroups: string[];
  asUserExtra: Record<string, string[]>;
  username?: string;
  password?: string;
  /** The raw `exec` and `auth-provider` maps, for @kubernetes/client-node (loaded only for them). */
  exec?: Record<string, unknown>;
  authProvider?: Record<string, unknown>;
  /** Every secret value of this user (token, password, key, exec env values, auth-provider config): never printed. */
  secrets: string[];
}

export interface ResolvedKubeconfig {
  files: readonly string[];
  context: string;
  namespace?: string;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
  /** Fields kubectl ignores and so do we (unknown names): said as warnings, never silently. */
  warnings: string[];
}

type Map_ = Record<string, unknown>;
interface Named {
  name: string;
  value: Map_;
  origin: Origin;
}

export interface ReadOptions {
  context?: string;
  readFile?: (path: string) => Buffer;
}

const isMap = (v: unknown): v is Map_ => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One file parsed with the failsafe schema: every scalar a string, typed by the field that holds it (as sigs.k8s.io/yaml types by the target). */
function parseFile(file: string, text: string): Map_ {
  const lineCounter = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, { schema: 'failsafe', prettyErrors: false, lineCounter, merge: false });
  const err = doc.errors[0];
  if (err) {
    const at = lineCounter.linePos(err.pos[0]);
    // The message only: yaml's "pretty" form quotes the lines around the error, which may hold a token.
    throw new KubeconfigError({
      file,
      path: '',
      reason: `not valid YAML at line ${at.line}, column ${at.col}: ${err.message.split('\n')[0]!.slice(0, 200)}`,
    });
  }
  const js: unknown = doc.toJS();
  if (js === null || js === undefined || js === '') return {};
  if (!isMap(js)) throw new KubeconfigError({ file, path: '', reason: 'not a kubeconfig (expected a map with clusters, users, contexts)' });
  return js;
}

function namedList(file: string, doc: Map_, key: 'clusters' | 'users' | 'contexts', inner: 'cluster' | 'user' | 'context'): Named[] {
  const list = doc[key];
  if (list === undefined || list === '') return [];
  if (!Array.isArray(list)) throw new KubeconfigError({ file, path: key, reason: 'must be a list' });
  return list.map((entry, i) => {
    const path = `${key}[${i}]`;
    if (!isMap(entry)) throw new KubeconfigError({ file, path, reason: `must be a map with name and ${inner}` });
    const name = entry['name'];
    if (typeof name !== 'string' || name === '')
      throw new KubeconfigError({ file, path: `${path}.name`, reason: 'must be a non-empty string' });
    const value = entry[inner] ?? {};
    if (!isMap(value)) throw new KubeconfigError({ file, path: `${path}.${inner}`, reason: 'must be a map' });
    return { name, value, origin: { file, path: `${path}.${inner}` } };
  });
}

/** The merged kubeconfig's chosen context, cluster and user; throws KubeconfigError. */
export function readKubeconfig(files: readonly string[], options: ReadOptions = {}): ResolvedKubeconfig {
  if (files.length === 0) throw new KubeconfigError({ file: '(none)', path: '', reason: 'no kubeconfig file' });
  const read = options.readFile ?? ((p: string) => readFileSync(p));
  const clusters = new Map<string, Named>();
  const users = new Map<string, Named>();
  const contexts = new Map<string, Named>();
  let current: string | undefined;
  for (const file of files) {
    let text: string;
    try {
      text = read(file).toString('utf8');
    } catch (e) {
      throw new KubeconfigError({ file, path: '', reason: `cannot read: ${(e as { code?: string }).code ?? 'error'}` });
    }
    const doc = parseFile(file, text);
    for (const c of namedList(file, doc, 'clusters', 'cluster')) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of namedList(file, doc, 'users', 'user')) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of namedList(file, doc, 'contexts', 'context')) if (!contexts.has(c.name)) contexts.set(c.name, c);
    const cc = doc['current-context'];
    if (current === undefined && typeof cc === 'string' && cc !== '') current = cc;
  }
  const all = files.join(', ');
  const contextName = options.context ?? current;
  if (contextName === undefined) throw new KubeconfigError({ file: all, path: 'current-context', reason: 'is not set (give --context)' });
  const context = contexts.get(contextName);
  if (!context) {
    throw new KubeconfigError(
      options.context !== undefined
        ? { file: all, path: '--context', value: contextName, reason: 'no such context' }
        : { file: all, path: 'current-context', value: contextName, reason: 'no such context' },
    );
  }
  const ctx = context.value;
  const clusterName = str(ctx, 'cluster', context.origin);
  const userName = str(ctx, 'user', context.origin);
  const namespace = str(ctx, 'namespace', context.origin);
  if (!clusterName)
    throw new KubeconfigError({
      file: context.origin.file,
      path: `${context.origin.path}.cluster`,
      reason: `context ${JSON.stringify(contextName)} names no cluster`,
    });
  const cluster = clusters.get(clusterName);
  if (!cluster)
    throw new KubeconfigError({
      file: context.origin.file,
      path: `${context.origin.path}.cluster`,
      value: clusterName,
      reason: `no such cluster in ${all}`,
    });
  let user: Named | undefined;
  if (userName) {
    user = users.get(userName);
    if (!user)
      throw new KubeconfigError({
        file: context.origin.file,
        path: `${context.origin.path}.user`,
        value: userName,
        reason: `no such user in ${all}`,
      });
  }
  const warnings: string[] = [];
  return {
    files,
    context: contextName,
    ...(namespace ? { namespace } : {}),
    cluster: readCluster(cluster, read, warnings),
    user: user ? readUser(user, read, warnings) : { origin: { file: all, path: '' }, asGroups: [], asUserExtra: {}, secrets: [] },
    warnings,
  };
}

function str(m: Map_, key: string, o: Origin): string | undefined {
  const v = m[key];
  if (v === undefined || v === '') return undefined;
  // Said without the value: the field may be a secret (a token, a password).
  if (typeof v !== 'string') throw new KubeconfigError({ file: o.file, path: `${o.path}.${key}`, reason: 'must be a string' });
  return v;
}

const TRUE = new Set(['true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'y', 'Y']);
const FALSE = new Set(['false', 'False', 'FALSE', 'no', 'No', 'NO', 'off', 'Off', 'OFF', 'n', 'N']);
function bool(m: Map_, key: string, o: Origin): boolean {
  const v = m[key];
  if (v === undefined || v === '') return false;
  if (typeof v === 'string' && TRUE.has(v)) return true;
  if (typeof v === 'string' && FALSE.has(v)) return false;
  throw new KubeconfigError({
    file: o.file,
    path: `${o.path}.${key}`,
    ...(typeof v === 'string' ? { value: v } : {}),
    reason: 'must be true or false',
  });
}

/** base64 as Go's encoding/json decodes []byte (StdEncoding; line breaks ignored). */
function base64Field(m: Map_, key: string, o: Origin, secret: boolean): Buffer | undefined {
  const v = str(m, key, o);
  if (v === undefined) return undefined;
  const clean = v.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.${key}`,
      ...(secret ? {} : { value: v.slice(0, 40) }),
      reason: 'is not valid base64',
    });
  }
  return Buffer.from(clean, 'base64');
}

/** A path relative to the kubeconfig that names it, read now (kubectl reads them at load, too). */
function fileField(m: Map_, key: string, o: Origin, read: (p: string) => Buffer): { path: string; content: Buffer } | undefined {
  const v = str(m, key, o);
  if (v === undefined) return undefined;
  const path = absoluteFrom(o.file, v);
  try {
    return { path, content: read(path) };
  } catch (e) {
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.${key}`,
      value: v,
      reason: `cannot read: ${(e as { code?: string }).code ?? 'error'}`,
    });
  }
}

export const absoluteFrom = (kubeconfigFile: string, p: string): string => (isAbsolute(p) ? p : resolve(dirname(kubeconfigFile), p));

function unknownFields(m: Map_, known: readonly string[], o: Origin, warnings: string[]): void {
  for (const k of Object.keys(m))
    if (!known.includes(k)) warnings.push(`kubeconfig ${o.file}: ${o.path}.${k}: unknown field, ignored (as kubectl ignores it)`);
}

function readCluster(c: Named, read: (p: string) => Buffer, warnings: string[]): KubeconfigCluster {
  const m = c.value;
  const o = c.origin;
  unknownFields(m, CLUSTER_FIELDS, o, warnings);
  const server = str(m, 'server', o);
  if (!server)
    throw new KubeconfigError({ file: o.file, path: `${o.path}.server`, reason: `cluster ${JSON.stringify(c.name)} has no server` });
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    // kubectl accepts a bare host[:port]: https is assumed.
    try {
      url = new URL(`https://${server}`);
    } catch {
      throw new KubeconfigError({ file: o.file, path: `${o.path}.server`, reason: 'is not a URL' });
    }
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.server`,
      value: `${url.protocol}//${url.host}`,
      reason: 'must be an https or http URL',
    });
  if (url.username || url.password)
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.server`,
      reason: "credentials in the server URL are not supported (use the user's username and password)",
    });
  const insecure = bool(m, 'insecure-skip-tls-verify', o);
  const caData = base64Field(m, 'certificate-authority-data', o, false);
  const caFile = fileField(m, 'certificate-authority', o, read);
  const ca = caData && caData.length > 0 ? caData : caFile?.content;
  if (insecure && ca) {
    // client-go: "specifying a root certificates file with the insecure flag is not allowed".
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.insecure-skip-tls-verify`,
      reason: `cannot be true with ${caData ? 'certificate-authority-data' : 'certificate-authority'} (a root certificate with the insecure flag is not allowed, as in kubectl)`,
    });
  }
  const tlsServerName = str(m, 'tls-server-name', o);
  const proxyUrl = str(m, 'proxy-url', o);
  return {
    origin: o,
    server: `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`,
    ...(tlsServerName ? { tlsServerName } : {}),
    insecureSkipTLSVerify: insecure,
    ...(ca ? { ca } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
    disableCompression: bool(m, 'disable-compression', o),
  };
}

function readUser(u: Named, read: (p: string) => Buffer, warnings: string[]): KubeconfigUser {
  const m = u.value;
  const o = u.origin;
  unknownFields(m, USER_FIELDS, o, warnings);
  const secrets: string[] = [];
  const keep = <T extends string | undefined>(v: T): T => (v ? (secrets.push(v), v) : v);
  const certData = base64Field(m, 'client-certificate-data', o, true);
  const keyData = base64Field(m, 'client-key-data', o, true);
  if (keyData) secrets.push(keyData.toString('utf8').trim(), str(m, 'client-key-data', o)!.replace(/[\r\n]/g, ''));
  const cert = certData && certData.length > 0 ? certData : fileField(m, 'client-certificate', o, read)?.content;
  const keyFile = keyData && keyData.length > 0 ? undefined : fileField(m, 'client-key', o, read);
  const key = keyData && keyData.length > 0 ? keyData : keyFile?.content;
  if (keyFile) secrets.push(keyFile.content.toString('utf8').trim());
  if (cert && !key)
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.client-key`,
      reason: 'client-key-data or client-key must be given with a client certificate',
    });
  if (key && !cert)
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.client-certificate`,
      reason: 'client-certificate-data or client-certificate must be given with a client key',
    });

  const token = keep(str(m, 'token', o));
  const tokenFileText = str(m, 'tokenFile', o);
  const tokenFile = tokenFileText ? absoluteFrom(o.file, tokenFileText) : undefined;
  const username = str(m, 'username', o);
  const password = keep(str(m, 'password', o));
  const exec = m['exec'];
  const authProvider = m['auth-provider'];
  if (exec !== undefined && !isMap(exec)) throw new KubeconfigError({ file: o.file, path: `${o.path}.exec`, reason: 'must be a map' });
  if (authProvider !== undefined && !isMap(authProvider))
    throw new KubeconfigError({ file: o.file, path: `${o.path}.auth-provider`, reason: 'must be a map' });
  // clientcmd's validateAuthInfo: one way of proving who you are (a client certificate may join any).
  const methods = [
    ...(token || tokenFile ? ['token' + (tokenFile && !token ? 'File' : '')] : []),
    ...(username || password ? ['username/password'] : []),
    ...(exec ? ['exec'] : []),
    ...(authProvider ? ['auth-provider'] : []),
  ];
  if (exec && authProvider)
    throw new KubeconfigError({ file: o.file, path: `${o.path}.exec`, reason: 'cannot be given with auth-provider (as in kubectl)' });
  if ((token || tokenFile) && (username || password))
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.username`,
      reason: `more than one authentication method (${methods.join(', ')}); only one is allowed, as in kubectl`,
    });
  if (exec) collectSecrets(exec['env'], secrets);
  if (authProvider) collectSecrets(authProvider['config'], secrets);

  const as = str(m, 'as', o);
  const asUid = str(m, 'as-uid', o);
  const groups = m['as-groups'];
  if (groups !== undefined && groups !== '' && (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string')))
    throw new KubeconfigError({ file: o.file, path: `${o.path}.as-groups`, reason: 'must be a list of strings' });
  const extraRaw = m['as-user-extra'];
  const asUserExtra: Record<string, string[]> = {};
  if (extraRaw !== undefined && extraRaw !== '') {
    if (!isMap(extraRaw))
      throw new KubeconfigError({ file: o.file, path: `${o.path}.as-user-extra`, reason: 'must be a map of lists of strings' });
    for (const [k, v] of Object.entries(extraRaw)) {
      const values = typeof v === 'string' ? [v] : v;
      if (!Array.isArray(values) || values.some((x) => typeof x !== 'string'))
        throw new KubeconfigError({ file: o.file, path: `${o.path}.as-user-extra.${k}`, reason: 'must be a list of strings' });
      asUserExtra[k] = values as string[];
    }
  }
  const asGroups = Array.isArray(groups) ? (groups as string[]) : [];
  if (!as && (asUid || asGroups.length > 0 || Object.keys(asUserExtra).length > 0)) {
    // As kubectl: "requesting uid, groups or user-extra ... without impersonating a user".
    throw new KubeconfigError({
      file: o.file,
      path: `${o.path}.as`,
      reason: 'is required with as-uid, as-groups or as-user-extra (impersonating groups or extras needs a user, as in kubectl)',
    });
  }
  return {
    origin: o,
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(token ? { token } : {}),
    ...(tokenFile ? { tokenFile } : {}),
    ...(as ? { as } : {}),
    ...(asUid ? { asUid } : {}),
    asGroups,
    asUserExtra,
    ...(username !== undefined || password !== undefined ? { username: username ?? '', password: password ?? '' } : {}),
    ...(exec ? { exec: exec as Map_ } : {}),
    ...(authProvider ? { authProvider: authProvider as Map_ } : {}),
    secrets,
  };
}

/** Every string value under `v` (exec env values, auth-provider config), as secrets. */
function collectSecrets(v: unknown, into: string[]): void {
  if (typeof v === 'string') {
    if (v.length >= 4) into.push(v);
  } else if (Array.isArray(v)) {
    for (const x of v) {
      // exec env: [{name, value}]: the value is the secret, the name is not.
      if (isMap(x) && 'value' in x) collectSecrets(x['value'], into);
      else collectSecrets(x, into);
    }
  } else if (isMap(v)) {
    for (const x of Object.values(v)) collectSecrets(x, into);
  }
}

/** `text` with each of `secrets` (4 characters or more) replaced by [redacted], longest first. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
