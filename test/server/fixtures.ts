// Test doubles for the server: a tiny admission core with scripted behaviour (driven by pod
// annotations), certificates made by `netattach certs` in-process, and an HTTPS client that
// verifies the CA and reports the peer certificate's serial.
import https from 'node:https';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { run as certsCommand } from '../../src/cli/certs.js';
import { createLogger } from '../../src/server/logger.js';
import type { AdmissionCore } from '../../src/server/types.js';
import type { AdmissionReview, Decision } from '../../src/admission/types.js';
import { invalid } from '../../src/field/index.js';
import { warningText } from '../../src/admission/warnings.js';

export const SCRIPT = 'test.netattach.io/script';
export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';

const annotations = (obj: unknown): Record<string, string> =>
  (obj as { metadata?: { annotations?: Record<string, string> } } | null | undefined)?.metadata?.annotations ?? {};

/** deny: denied by rule `allowedNetworks`; throw: the core throws; bad-uid: toResponse breaks the contract. */
export const fakeCore: AdmissionCore = {
  decodeReview(body) {
    const b = body as Partial<AdmissionReview> | null;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) return { ok: false, error: '<body>: must be an AdmissionReview object' };
    if (b.apiVersion !== 'admission.k8s.io/v1' && b.apiVersion !== 'admission.k8s.io/v1beta1')
      return { ok: false, error: 'apiVersion: Unsupported value' };
    if (typeof b.request !== 'object' || b.request === null) return { ok: false, error: 'request: Required value' };
    return { ok: true, review: b as AdmissionReview };
  },
  plan(request) {
    const value = annotations(request.object)[NETWORKS];
    const nadRefs = value ? value.split(',').map((n) => ({ namespace: request.namespace ?? 'default', name: n.trim() })) : [];
    return { nadRefs };
  },
  review(request, context) {
    const script = annotations(request.object)[SCRIPT];
    if (script === 'throw') throw new Error('scripted failure');
    const decision: Decision = { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] };
    const value = annotations(request.object)[NETWORKS];
    for (const [i, name] of (value ? value.split(',') : []).entries()) {
      const found = context.nads(request.namespace ?? 'default', name.trim());
      if (found.status !== 'found') {
        decision.allowed = false;
        const error = invalid(
          `metadata.annotations[${NETWORKS}][${i}]`,
          name.trim(),
          `network ${found.status}${found.status === 'unavailable' ? `: ${found.reason}` : ''}`,
        );
        decision.errors.push(error);
        decision.findings.push({ policy: 'builtin', rule: 'networkExists', action: 'Enforce', error });
      }
    }
    if (script === 'deny') {
      decision.allowed = false;
      const error = invalid('metadata.annotations', 'secret-value-123', 'denied by script');
      decision.errors.push(error);
      decision.findings.push({ policy: 'p1', rule: 'allowedNetworks', action: 'Enforce', error });
    }
    if (script === 'warn') decision.warnings.push({ note: { path: '', text: 'scripted warning' } });
    if (script === 'claim')
      decision.addresses.push({ kind: 'mac', value: '02:00:00:00:00:01', scope: 'cluster', pod: { namespace: request.namespace ?? '' } });
    if (decision.allowed && context.endpoint === 'mutate')
      decision.patch.push({ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } });
    if (!decision.allowed) decision.code = 403;
    return decision;
  },
  toResponse(apiVersion, uid, decision, endpoint) {
    const response: NonNullable<AdmissionReview['response']> = { uid, allowed: decision.allowed };
    if (!decision.allowed)
      response.status = { code: decision.code ?? 403, reason: 'Forbidden', message: decision.errors.map((e) => e.path).join(', ') };
    if (endpoint === 'mutate' && decision.patch.length > 0) {
      response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
      response.patchType = 'JSONPatch';
    }
    if (decision.warnings.length > 0) response.warnings = decision.warnings.map(warningText);
    return { apiVersion, kind: 'AdmissionReview', response };
  },
};

let uidCounter = 0;
export function podReview(
  opts: {
    apiVersion?: string;
    annotations?: Record<string, string>;
    namespace?: string;
    dryRun?: boolean;
    operation?: string;
    padding?: number;
  } = {},
): AdmissionReview {
  const uid = `uid-${++uidCounter}-${Math.random().toString(16).slice(2)}`;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: opts.namespace ?? 'default', annotations: opts.annotations ?? {} },
    spec: { containers: [{ name: 'c', image: 'busybox', env: opts.padding ? [{ name: 'PAD', value: 'x'.repeat(opts.padding) }] : [] }] },
  };
  return {
    apiVersion: (opts.apiVersion ?? 'admission.k8s.io/v1') as AdmissionReview['apiVersion'],
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'p',
      namespace: opts.namespace ?? 'default',
      operation: (opts.operation ?? 'CREATE') as 'CREATE',
      userInfo: { username: 'alice' },
      object: pod,
      oldObject: null,
      dryRun: opts.dryRun ?? false,
    },
  };
}

/** Runs `netattach certs` in-process; returns the directory's PEMs. */
export async function makeCerts(dir: string, extra: string[] = []): Promise<{ dir: string; ca: string; cert: string; key: string }> {
  const err: string[] = [];
  const code = await certsCommand(['--out', dir, '--san', '127.0.0.1', '--san', 'localhost', '--force', ...extra], {
    stdout: () => {},
    stderr: (s) => err.push(s),
    stdin: Readable.from([]),
    env: {},
    cwd: process.cwd(),
  });
  if (code !== 0) throw new Error(`netattach certs failed: ${err.join('')}`);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { dir, ca: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
}

/** A pino logger writing JSON lines into an array, to assert what gets logged. */
export function captureLogger(level: 'debug' | 'info' = 'info'): { logger: Logger; lines: Array<Record<string, unknown>>; raw: string[] } {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      cb();
    },
  });
  return { logger: createLogger(level, stream), lines, raw };
}

export interface HttpResult {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  json: any;
  serial?: string;
}

export interface RequestOptions {
  method?: string;
  ca?: string | string[];
  contentType?: string | null;
  agent?: https.Agent | false;
  cert?: string;
  key?: string;
}

/** One HTTPS request that verifies the server against `ca`. */
export function request(url: string, body: string | Buffer | undefined, opts: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
    const req = https.request(
      url,
      {
        method: opts.method ?? 'POST',
        ca: opts.ca,
        headers,
        agent: opts.agent ?? false,
        cert: opts.cert,
        key: opts.key,
        servername: 'localhost',
      },
      (res) => {
        const chunks: Buffer[] = [];
        const serial = (res.socket as import('node:tls').TLSSocket).getPeerCertificate?.()?.serialNumber;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, serial });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function getHttp(url: string): Promise<HttpResult> {
  const res = await fetch(url);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: Object.fromEntries(res.headers), text, json };
}

export const hostPort = (url: string): { host: string; port: number } => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

/** A TLS connection that has finished its handshake. */
export function connect(url: string, ca: string, extra: tls.ConnectionOptions = {}): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ ...hostPort(url), ca, servername: 'localhost', ...extra }, () => resolve(s));
    s.once('error', reject);
    s.resume(); // read what the server sends, so 'close' comes when it closes
  });
}
