// `check` gives the webhook's verdicts: every object of the fixtures goes once through check and
// once, as the apiserver would send it, through the server's real pipeline (decode, plan, NAD
// lookups, review, response); the answers must agree, message for message.
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import * as core from '../../src/admission/index.js';
import { checkManifests, parseManifests, resourceOf, type ManifestObject, type ObjectResult } from '../../src/check/index.js';
import { isNadObject, StaticNadSource } from '../../src/nads/index.js';
import { NO_POLICY } from '../../src/policy/index.js';
import { createMetrics, handleReview } from '../../src/server/index.js';
import { inputs, nad, podTemplate, workloads } from './helpers.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/check');

async function webhookAnswer(m: ManifestObject, nads: StaticNadSource, namespace: string) {
  const o = m.object as { apiVersion: string; kind: string; metadata?: { name?: string; namespace?: string } };
  const { gvk, gvr } = resourceOf(o.apiVersion, o.kind);
  const request: core.AdmissionRequest = {
    uid: 'u',
    kind: gvk,
    resource: gvr,
    namespace: o.metadata?.namespace ?? namespace,
    ...(o.metadata?.name ? { name: o.metadata.name } : {}),
    operation: 'CREATE',
    userInfo: {},
    object: o,
    dryRun: true,
  };
  const body = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
  const deps = {
    core,
    nadSource: nads,
    policy: NO_POLICY,
    reservations: { reserve: () => {} },
    config: core.DEFAULT_ADMISSION_CONFIG,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(() => nads),
  };
  const pod = gvr.resource === 'pods';
  const answers = [];
  // A Pod passes both webhooks (mutating, then validating); anything else only the validating one.
  for (const endpoint of pod ? (['mutate', 'validate'] as const) : (['validate'] as const)) {
    const r = await handleReview(body, endpoint, 1000, deps);
    if (r.status !== 200) throw new Error(r.error);
    answers.push(r.review.response!);
  }
  return answers;
}

function expectSame(t: Test, label: string, checked: ObjectResult, answers: core.AdmissionResponse[]): void {
  const [first] = answers;
  t.equal(checked.allowed, first!.allowed, `${label}: allowed`);
  if (!first!.allowed) t.equal(core.denialMessage(checked.errors), first!.status?.message, `${label}: message`);
  for (const a of answers) t.equal(a.allowed, first!.allowed, `${label}: both endpoints agree`);
  // `check` shows each warning whole; the webhook shortens a long one's value, keeping its path and
  // its reason (the text after the last cut is the end of the whole warning).
  const lines = first!.warnings ?? [];
  t.equal(lines.length, checked.warnings.length, `${label}: warning count`);
  checked.warnings.forEach((whole, i) => {
    const line = lines[i] ?? '';
    if (line === whole) return;
    const afterCut = line.slice(line.lastIndexOf('...') + 3);
    t.ok(
      whole.length > core.MAX_WARNING_LENGTH &&
        line.length <= core.MAX_WARNING_LONG &&
        whole.startsWith(line.split(': ')[0]!) &&
        whole.endsWith(afterCut) &&
        afterCut.length > 0,
      `${label}: warning ${i} keeps its path and its reason: ${line}`,
    );
  });
}

t.test('the fixtures: same verdicts and messages as the webhook pipeline', async (t) => {
  const objects: ManifestObject[] = [];
  for (const file of ['stream.yaml', 'mixed/a-nads.yaml', 'mixed/c-list.json', 'mixed/deeper/job.yml']) {
    objects.push(...parseManifests(readFileSync(join(FIXTURES, file), 'utf8'), file).objects);
  }
  const nads = new StaticNadSource(objects.filter((m) => isNadObject(m.object)).map((m) => m.object));
  const results = checkManifests(objects);
  let compared = 0;
  for (const [i, m] of objects.entries()) {
    const r = results[i]!;
    expectSame(t, `${r.file} ${r.kind}/${r.name}`, r, await webhookAnswer(m, nads, 'default'));
    compared++;
  }
  t.equal(compared, 13);
  t.equal(results.filter((r) => !r.allowed).length, 4, 'the fixtures do hold denials');
});

t.test('every workload kind, with good and bad annotations: same verdicts as the webhook pipeline', async (t) => {
  const annotations = [
    'net1',
    'missing',
    '[{"name": "net1", "mac": "zz"}]',
    '[{"name": "net1", "interface": ""}]',
    'net1, net1@eth0, bad_name!',
    '{"not": "a list"}',
  ];
  const net1 = nad('net1', { resourceName: 'intel.com/vf' });
  const nads = new StaticNadSource([net1]);
  for (const value of annotations) {
    for (const w of workloads(podTemplate(value))) {
      const objects = inputs(net1, w.object);
      const [, r] = checkManifests(objects);
      expectSame(t, `${w.kind} ${value}`, r!, await webhookAnswer(objects[1]!, nads, 'default'));
    }
  }
});
