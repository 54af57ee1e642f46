// A real-world case through `netattach check --mutate` (the webhook's own engine, as a dry-run
// CREATE), and where netattach's answer departs from the verdict a real cluster gives.
import { checkManifests, type ManifestObject, type ObjectResult } from '../../../src/check/index.js';
import type { RealWorldCase } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** At most this many warnings on one pod: more is noise whatever they say. */
export const MAX_WARNINGS_PER_POD = 3;

/** The Pod a workload's controller creates from its template (what the Pod webhook judges and mutates). */
export function podOf(workload: Json): Json {
  if (workload['kind'] === 'Pod') return workload;
  const meta = isObject(workload['metadata']) ? workload['metadata'] : {};
  const spec = isObject(workload['spec']) ? workload['spec'] : {};
  const template = isObject(spec['template']) ? spec['template'] : {};
  const tmeta = isObject(template['metadata']) ? template['metadata'] : {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...tmeta, name: `${String(meta['name'])}-0`, ...(meta['namespace'] ? { namespace: meta['namespace'] } : {}) },
    spec: structuredClone(template['spec'] ?? {}),
  };
}

export interface Judged {
  /** The pod's result (for a workload: the pod its controller creates). */
  pod: ObjectResult;
  /** The workload's own result (the template webhook), when the case's last object is not a Pod. */
  workload?: ObjectResult;
  /** Resources the mutation adds, by container: what the patch sets minus what the pod asked for. */
  injected: Record<string, Record<string, string>>;
  /** Each way netattach departs from the real verdict (empty: it agrees). */
  disagreements: string[];
}

const EXTENDED_RESOURCE = /^(?!kubernetes\.io\/|requests\.)[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function judge(c: RealWorldCase): Judged {
  const objects = c.objects.slice(0, -1);
  const last = c.objects[c.objects.length - 1]!;
  const inputs = last['kind'] === 'Pod' ? [...objects, last] : [...objects, last, podOf(last)];
  const results = checkManifests(
    inputs.map((object, index): ManifestObject => ({ file: c.name, index, object })),
    { mutate: true },
  );
  const pod = results[results.length - 1]!;
  const workload = last['kind'] === 'Pod' ? undefined : results[results.length - 2];
  const injected = injectedOf(inputs[inputs.length - 1]!, pod);
  const out: string[] = [];
  const v = c.verdict;

  if (pod.skipped) out.push(`not judged: ${pod.skipped}`);
  results.forEach((r, i) => {
    if (r.kind !== 'NetworkAttachmentDefinition' || i >= objects.length) return;
    const denied = (c.deniedNads ?? []).includes(r.name ?? '');
    if (r.allowed === denied)
      out.push(
        denied
          ? `NAD ${r.name} admitted, yet Multus cannot load it`
          : `false denial of NAD ${r.name}: ${r.errors.map((e) => `${e.path}: ${e.reason}`).join('; ')}`,
      );
  });
  if (pod.allowed !== v.allowed)
    out.push(
      v.allowed ? `false denial: ${pod.errors.map((e) => `${e.path}: ${e.reason}`).join('; ')}` : 'missed certain failure: admitted',
    );
  if (!pod.allowed && !v.allowed) {
    const texts = pod.errors.map((e) => `${e.path}: ${e.reason}`);
    (v.errors ?? []).forEach((p, i) => {
      if (!p.test(texts[i] ?? '')) out.push(`denied for another cause: ${JSON.stringify(texts[i] ?? 'no error')} is not ${p}`);
    });
    if (texts.length !== (v.errors ?? []).length)
      out.push(`${texts.length} errors, the real failure has ${(v.errors ?? []).length}: ${texts.join('; ')}`);
  }
  if (workload && workload.allowed !== pod.allowed)
    out.push(`the template webhook says ${workload.allowed}, the pod webhook ${pod.allowed}`);

  if (pod.allowed && v.allowed) {
    // Warnings: exactly the recorded causes, one warning each, and a bound on the count.
    const unmatched = pod.warnings.filter((w) => !(v.warnings ?? []).some((p) => p.test(w)));
    for (const w of unmatched) out.push(`noise: warning ${JSON.stringify(w)}`);
    for (const p of v.warnings ?? []) {
      const n = pod.warnings.filter((w) => p.test(w)).length;
      if (n === 0) out.push(`missing warning ${p}`);
      if (n > 1) out.push(`warning ${p} given ${n} times (one a cause)`);
    }
    if (pod.warnings.length > MAX_WARNINGS_PER_POD) out.push(`${pod.warnings.length} warnings on one pod`);

    // Injection: what the source's set-up advertises, a name the apiserver accepts, as recorded.
    for (const [container, resources] of Object.entries(injected))
      for (const name of Object.keys(resources)) {
        if (!EXTENDED_RESOURCE.test(name))
          out.push(`injects ${name} in ${container}: not an extended resource name (the apiserver refuses the pod)`);
        else if (!(c.advertised ?? []).includes(name))
          out.push(`injects ${name} in ${container}: nothing in the set-up advertises it (the pod stays Pending)`);
      }
    const selector = pod.mutation?.nodeSelector;
    if (JSON.stringify(selector) !== JSON.stringify(v.nodeSelector))
      out.push(
        `node selector ${JSON.stringify(selector ?? 'unchanged')}, the real set-up needs ${JSON.stringify(v.nodeSelector ?? 'unchanged')}`,
      );
    const want = v.injects ?? {};
    if (JSON.stringify(sorted(injected)) !== JSON.stringify(sorted(want)))
      out.push(`injects ${JSON.stringify(injected)}, the real set-up needs ${JSON.stringify(want)}`);
  }
  return { pod, ...(workload ? { workload } : {}), injected, disagreements: out };
}

/** Per container: the resources whose request the patch adds or raises (requests and limits kept equal by the webhook). */
function injectedOf(before: Json, result: ObjectResult): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  const spec = isObject(before['spec']) ? before['spec'] : {};
  const containers = [...asArray(spec['initContainers']), ...asArray(spec['containers'])];
  for (const [name, after] of Object.entries(result.mutation?.resources ?? {})) {
    const was = containers.find((x) => x['name'] === name);
    const r = isObject(was?.['resources']) ? was['resources'] : {};
    const asked = { ...(isObject(r['limits']) ? r['limits'] : {}), ...(isObject(r['requests']) ? r['requests'] : {}) };
    const now = { ...after.limits, ...after.requests };
    for (const [k, q] of Object.entries(now)) if (String(asked[k] ?? '') !== q) (out[name] ??= {})[k] = q;
  }
  return out;
}

const asArray = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

function sorted(r: Record<string, Record<string, string>>): Array<[string, Array<[string, string]>]> {
  return Object.entries(r)
    .map(([k, v]): [string, Array<[string, string]>] => [k, Object.entries(v).sort()])
    .sort((a, b) => a[0].localeCompare(b[0]));
}
