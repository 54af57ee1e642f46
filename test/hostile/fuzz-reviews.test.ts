// Property-based fuzzing of whole AdmissionReviews over HTTPS, real admission core, hostile
// shapes mixed in (values repeated up to the annotation limit, many plugins, long selector lists,
// deep nesting, keys up to 200 KB at every depth, up to 1,000 addresses): every case is answered
// within a time budget, as a review (never a 500 or an internal-error denial) or, for a body no
// AdmissionReview has, a 4xx naming the problem; and every answer is small whatever the request
// held (issue 24: a 200 KB key used to come back 20 times in a 4 MB denial).
import t from 'tap';
import fc from 'fast-check';
import https from 'node:https';
import { StaticNadSource, nadFromObject } from '../../src/nads/index.js';
import { MAX_DENIAL_BYTES, MAX_WARNINGS, MAX_WARNINGS_TOTAL } from '../../src/admission/index.js';
import { request } from '../server/fixtures.js';
import { startServer } from '../server/harness.js';

/** Per case, HTTP round trip included; a review takes milliseconds, the rest is slack for a loaded machine. */
const BUDGET_MS = 2000;
t.setTimeout(300_000);
const ANNOTATION_LIMIT = 256 * 1024;
/** An answer without its patch: the denial message, the warnings (up to 4,096 characters, 6 bytes each when escaped) and the envelope. */
const ANSWER_BOUND = MAX_DENIAL_BYTES + 6 * MAX_WARNINGS_TOTAL + 4 * 1024;

const nad = (name: string, annotations: Record<string, string> = {}) =>
  nadFromObject({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: 'default', annotations },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name, plugins: [{ type: 'sriov', capabilities: { mac: true, ips: true } }] }) },
  });

const fragment = fc.oneof(
  fc.constantFrom(
    'a',
    'a,',
    '{"name":"a"},',
    '{"name":"a","mac":"02:00:00:00:00:01"},',
    '1e400,',
    '1.0,',
    '"x.y":[',
    '[',
    '{',
    '"',
    '\\',
    ',',
    '@',
    '/',
    'a@net1,',
    '{"name":"a","name":"b"},',
  ),
  fc.string({ maxLength: 12 }),
);
/** A fragment repeated up to the annotation limit, with an opening and a closing. */
const bigValue = fc
  .tuple(
    fragment,
    fc.constantFrom('', '[', '[{"name":"a","x.y":['),
    fc.constantFrom('', ']', ']}]'),
    fc.integer({ min: 1, max: ANNOTATION_LIMIT }),
  )
  .filter(([unit]) => unit.length > 0)
  .map(
    ([unit, open, close, size]) =>
      open + unit.repeat(Math.ceil(size / unit.length)).slice(0, Math.max(0, size - open.length - close.length)) + close,
  );
/** A key of up to 200 KB (within the annotation limit with what surrounds it), escaped as JSON text. */
const longKey = fc
  .tuple(fc.constantFrom('k', 'MAC', 'ſ', 'é', '😀', 'x.'), fc.integer({ min: 100, max: 200_000 }))
  .map(([unit, n]) => JSON.stringify(unit.repeat(Math.ceil(n / unit.length)).slice(0, n)).slice(1, -1));
/** Where the long key sits: under cni-args (top or nested), as an element key, dotted, in bandwidth or a port mapping. */
const keyPlaces: Record<string, (key: string, leaf: string) => string> = {
  cniArgs: (k, leaf) => `{"name":"a","cni-args":{"${k}":${leaf}}}`,
  nested: (k, leaf) => `{"name":"a","cni-args":{"a":{"b":{"${k}":${leaf}}}}}`,
  element: (k, leaf) => `{"name":"a","${k}":${leaf}}`,
  dotted: (k, leaf) => `{"name":"a","x.${k}":${leaf}}`,
  bandwidth: (k, leaf) => `{"name":"a","bandwidth":{"${k}":${leaf},"ingressRate":1.5}}`,
  portMappings: (k, leaf) => `{"name":"a","portMappings":[{"${k}":${leaf},"hostPort":1e400}]}`,
};
const leaf = fc.oneof(
  fc.constantFrom('1', '"x"', 'null', '{}'),
  fc
    .tuple(fc.constantFrom('1e400', '1.0', '"x"'), fc.integer({ min: 1, max: 600 }))
    .map(([v, n]) => `[${Array.from({ length: n }, () => v).join(',')}]`),
);
const longKeyNetworks = fc
  .tuple(longKey, fc.constantFrom(...Object.keys(keyPlaces)), leaf, fc.integer({ min: 1, max: 3 }))
  .map(([k, place, l, copies]) => `[${Array.from({ length: copies }, () => keyPlaces[place]!(k, l)).join(',')}]`)
  .filter((v) => v.length <= ANNOTATION_LIMIT);
/** Up to 1,000 elements with a MAC each (top-level or under cni-args), repeated or distinct, valid or not. */
const manyAddresses = fc
  .tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom('mac', 'cni-args'), fc.constantFrom('distinct', 'same', 'bad'))
  .map(([n, where, kind]) => {
    const mac = (i: number) =>
      kind === 'bad'
        ? `zz:${i}`
        : kind === 'same'
          ? '02:00:00:00:00:01'
          : `02:00:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
    const el = (i: number) =>
      where === 'mac'
        ? `{"name":"a","interface":"n${i}","mac":"${mac(i)}"}`
        : `{"name":"a","interface":"n${i}","cni-args":{"mac":"${mac(i)}"}}`;
    return `[${Array.from({ length: n }, (_, i) => el(i)).join(',')}]`;
  });
const networks = fc.oneof(
  fc.constantFrom('a', 'a,b', '[{"name":"b","ips":["10.0.0.1/24"]}]', 'missing'),
  fc.string(),
  bigValue,
  longKeyNetworks,
  manyAddresses,
);
/** Other annotations of the pod: sometimes one under a long key with a value that is not a string. */
const otherAnnotations = fc.oneof(
  fc.constant({}),
  fc.integer({ min: 100, max: 200_000 }).map((n): Record<string, unknown> => ({ [`example.com/${'k'.repeat(n)}`]: 1 })),
);

const nested = (depth: number, leaf: unknown): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
};
const extra = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 1, max: 200 }).map((d) => nested(d, 'x')),
);

const pod = fc
  .record({ networks, extra, others: otherAnnotations, ns: fc.constantFrom('default', 'other') })
  .map(({ networks: n, extra: e, others, ns }) => ({
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: ns,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: ns, annotations: { ...others, 'k8s.v1.cni.cncf.io/networks': n }, labels: { x: 'y' } },
      spec: { containers: [{ name: 'c', image: 'i' }], extra: e },
    },
  }));

const nadConfig = fc.oneof(
  fc.constantFrom('', '{}', '{"type":"sriov"}', 'not json'),
  fc.integer({ min: 0, max: 20_000 }).map((n) =>
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'n',
      plugins: Array.from({ length: n }, (_, i) => (i % 3 ? { x: 1 } : { type: 'bridge' })),
    }),
  ),
  fc.integer({ min: 1, max: 200 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
  fc.string(),
);
const nadAnnotations = fc.record(
  {
    'k8s.v1.cni.cncf.io/resourceName': fc.oneof(fc.constantFrom('example.com/a', ''), bigValue),
    'k8s.v1.cni.cncf.io/nodeSelector': fc.oneof(fc.constantFrom('zone=a', '-', ''), bigValue),
  },
  { requiredKeys: [] },
);
const nadRequest = fc
  .record({ config: nadConfig, annotations: nadAnnotations, op: fc.constantFrom('CREATE', 'UPDATE') })
  .map(({ config, annotations, op }) => {
    const object = {
      apiVersion: 'k8s.cni.cncf.io/v1',
      kind: 'NetworkAttachmentDefinition',
      metadata: { name: 'n', namespace: 'default', annotations },
      spec: { config },
    };
    return {
      kind: { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' },
      resource: { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' },
      namespace: 'default',
      operation: op,
      object,
      ...(op === 'UPDATE' ? { oldObject: object } : {}),
    };
  });

let uid = 0;
const admissionReview = fc.tuple(fc.oneof(pod, nadRequest), fc.constantFrom('/mutate', '/validate')).map(([req, path]) => ({
  path,
  body: JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: `fuzz-${++uid}`, operation: 'CREATE', userInfo: { username: 'fuzz' }, name: 'n', ...req },
  }),
}));

t.test('any AdmissionReview, hostile shapes included, is answered within the budget and never as an internal error', async (t) => {
  const { url, ca, logs } = await startServer(t, {
    deps: { core: undefined, nadSource: new StaticNadSource([nad('a', { 'k8s.v1.cni.cncf.io/resourceName': 'example.com/a' }), nad('b')]) },
  });
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  let slowest = 0;
  let largest = 0;
  let reviews = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(admissionReview, async ({ path, body }) => {
      const started = performance.now();
      const res = await request(`${url}${path}`, body, { ca, agent });
      const ms = performance.now() - started;
      slowest = Math.max(slowest, ms);
      if (ms > BUDGET_MS) throw new Error(`answered in ${ms.toFixed(0)} ms (budget ${BUDGET_MS} ms), body of ${body.length} bytes`);
      if (res.status === 400) {
        // Only a body no AdmissionReview has: too deep (the generator nests up to 200 levels), or
        // one holding a "__proto__" key or a "constructor" with a "prototype", which the
        // generator's arbitrary keys can write (refused as prototype poisoning, docs/security.md).
        const poisoned = /"(?:__proto__|constructor)"/.test(body) && res.json?.code === 'NETATTACH_PROTOTYPE_POISONING';
        if (res.json?.code !== 'NETATTACH_BODY_SHAPE' && !poisoned) throw new Error(`400: ${res.text.slice(0, 300)}`);
        refused++;
        return;
      }
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      const r = res.json.response;
      if (typeof r?.allowed !== 'boolean' || r.uid !== JSON.parse(body).request.uid)
        throw new Error(`not a review: ${res.text.slice(0, 300)}`);
      if (r.status?.code === 500) throw new Error(`internal error: ${r.status.message}`);
      // Answers cost what the question cost: the message, the warnings and the envelope are
      // bounded whatever the request held (the patch is apart: it is the request's own text).
      const messageBytes = Buffer.byteLength(r.status?.message ?? '');
      if (messageBytes > MAX_DENIAL_BYTES)
        throw new Error(`denial of ${messageBytes} bytes (bound ${MAX_DENIAL_BYTES}), body of ${body.length} bytes`);
      const warnings: string[] = r.warnings ?? [];
      const warningChars = warnings.reduce((n, w) => n + w.length, 0);
      if (warnings.length > MAX_WARNINGS || warningChars > MAX_WARNINGS_TOTAL)
        throw new Error(`${warnings.length} warnings, ${warningChars} characters`);
      const envelope = Buffer.byteLength(JSON.stringify({ ...r, patch: undefined }));
      if (envelope > ANSWER_BOUND) throw new Error(`answer of ${envelope} bytes without its patch (bound ${ANSWER_BOUND})`);
      largest = Math.max(largest, envelope);
      reviews++;
    }),
    { numRuns: 150 },
  );
  t.ok(
    reviews > 50,
    `${reviews} reviews, ${refused} refused bodies; slowest case ${slowest.toFixed(0)} ms; largest answer without its patch ${largest} bytes`,
  );
  t.notOk(
    logs.lines.some((l) => l.level === 50),
    'no error logged',
  );
  t.ok(Math.max(...logs.raw.map((l) => l.length)) < 64 * 1024, 'log lines stay short');
});
