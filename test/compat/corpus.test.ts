// The compatibility corpus through the server's real pipeline (decode, plan, NAD lookups,
// review, reservation, response) and through `netattach check`: each verdict must be the one a
// real cluster gives (see corpus.ts for why), and both must agree.
import t from 'tap';
import fastJsonPatch from 'fast-json-patch';
import * as core from '../../src/admission/index.js';
import { checkManifests, type ManifestObject } from '../../src/check/index.js';
import { handleReview } from '../../src/server/index.js';
import { CORPUS, KUBEVIRT_CONTROLLER, NADS, type CorpusCase } from './corpus.js';
import { ALICE, corpusDeps, corpusPolicies, stepReview } from './pipeline.js';

async function serve(c: CorpusCase) {
  const deps = corpusDeps(corpusPolicies(c));
  const answers = [];
  for (const [i, step] of c.steps.entries()) {
    const body = stepReview(step, `corpus-${i}`, step.before ? KUBEVIRT_CONTROLLER : ALICE);
    // The mutating webhook sees CREATEs only (manifests/); the validating one both.
    const responses: Record<string, core.AdmissionResponse> = {};
    for (const endpoint of step.before ? (['validate'] as const) : (['mutate', 'validate'] as const)) {
      const r = await handleReview(body, endpoint, 1000, deps);
      if (r.status !== 200) throw new Error(r.error);
      responses[endpoint] = r.review.response!;
    }
    answers.push(responses);
    // Admitted pods stay reserved (as in the seconds before the pod watch sees them), as in check.
  }
  return answers;
}

for (const c of CORPUS) {
  t.test(`${c.name}: ${c.why}`, async (t) => {
    const answers = await serve(c);
    const creates = c.steps.filter((s) => !s.before);
    const checked = creates.length
      ? checkManifests(
          [...NADS, ...creates.map((s) => s.pod)].map((object, index): ManifestObject => ({ file: 'corpus', index, object })),
          { policies: corpusPolicies(c), userInfo: ALICE },
        )
      : [];
    let created = 0;
    for (const [i, step] of c.steps.entries()) {
      const got = answers[i]!;
      const validate = got.validate!;
      t.equal(validate.allowed, step.allowed, `step ${i}: allowed (${validate.status?.message ?? 'no message'})`);
      if (got.mutate) t.equal(got.mutate.allowed, validate.allowed, `step ${i}: both webhooks agree`);
      for (const e of step.errors ?? []) t.match(validate.status?.message ?? '', e, `step ${i}: denial names it`);
      if (step.allowed && !step.errors) t.equal(validate.status, undefined, `step ${i}: no denial`);
      if (step.injects) {
        const patched = fastJsonPatch.applyPatch(
          structuredClone(step.pod),
          JSON.parse(Buffer.from(got.mutate!.patch ?? 'W10=', 'base64').toString()),
          true,
          false,
        ).newDocument as {
          spec: { containers: Array<{ name: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }> };
        };
        const target = patched.spec.containers.find((x) => x.name === step.injects!.container);
        t.same(
          target?.resources,
          { requests: step.injects.resources, limits: step.injects.resources },
          `step ${i}: resources in ${step.injects.container}`,
        );
      }
      if (step.before) continue;
      // `netattach check` on the same objects, in the same order: the same verdict and warnings.
      const r = checked[NADS.length + created++]!;
      t.equal(r.allowed, validate.allowed, `step ${i}: check agrees`);
      if (!r.allowed) t.equal(core.denialMessage(r.errors), validate.status?.message, `step ${i}: check gives the same message`);
      t.equal(r.warnings.length, (got.mutate?.warnings ?? validate.warnings ?? []).length, `step ${i}: same number of warnings`);
      for (const w of step.warnings ?? [])
        t.ok(
          r.warnings.some((x) => w.test(x)),
          `step ${i}: warning ${w}`,
        );
    }
  });
}
