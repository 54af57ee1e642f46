/**
 * The review driver of `npm run bench:scale` (scale.ts): AdmissionReviews straight to a netattach's
 * /mutate and /validate at a fixed rate over keep-alive HTTPS connections, every verdict checked
 * against the plan, the process's CPU from /proc.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import fastJsonPatch from 'fast-json-patch';
import { admissionReview, emptyTally, podObject, tally, type ReviewPlan, type VerdictTally } from './scale-model.js';

type Obj = Record<string, unknown>;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ /proc

export function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

export function rssMb(pid: number | undefined): number {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+)/m.exec(s)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

// ------------------------------------------------------------------ the review driver

export interface DriveResult {
  pods: number;
  calls: number;
  seconds: number;
  cpuSeconds: number;
  /** ms per call, by endpoint */
  mutate: number[];
  validate: number[];
  tally: VerdictTally;
  /** pods not started on time because `maxInFlight` were in flight */
  late: number;
}

function reviewCaller(url: string, ca: string, connections: number) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: connections, ca, servername: 'localhost' });
  const call = (
    endpoint: 'mutate' | 'validate',
    review: Obj,
  ): Promise<{ ms: number; response: { allowed: boolean; patch?: string; status?: { message?: string } } }> =>
    new Promise((resolve, reject) => {
      const t = performance.now();
      const body = JSON.stringify(review);
      const req = https.request(
        `${url}/${endpoint}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let b = '';
          res.setEncoding('utf8').on('data', (d: string) => (b += d));
          res.on('end', () => {
            const ms = performance.now() - t;
            if (res.statusCode !== 200) return reject(new Error(`/${endpoint}: HTTP ${res.statusCode} ${b.slice(0, 300)}`));
            try {
              resolve({ ms, response: (JSON.parse(b) as { response: { allowed: boolean } }).response });
            } catch (e) {
              reject(e as Error);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { call, close: () => agent.destroy() };
}

/**
 * Pods at rate/2 per second (two calls each), open loop: pod n starts at n·interval whatever the
 * answers, at most `maxInFlight` at once (the rest are started late and counted).
 */
export async function drive(o: {
  url: string;
  ca: string;
  pid: number | undefined;
  plan: (k: number) => ReviewPlan;
  kFrom: number;
  seconds: number;
  rate: number;
  connections: number;
}): Promise<DriveResult> {
  const { url, ca, pid, plan, kFrom, seconds } = o;
  const caller = reviewCaller(url, ca, o.connections);
  const podRate = o.rate / 2;
  const total = Math.round(podRate * seconds);
  const intervalMs = 1000 / podRate;
  const maxInFlight = o.connections * 8;
  const out: DriveResult = { pods: total, calls: 0, seconds: 0, cpuSeconds: 0, mutate: [], validate: [], tally: emptyTally(), late: 0 };
  let inFlight = 0;
  const one = async (k: number): Promise<void> => {
    const r = plan(k);
    const pod = podObject(r.pod);
    try {
      const m = await caller.call('mutate', admissionReview(pod, `m-${k}`));
      out.calls++;
      out.mutate.push(m.ms);
      if (!m.response.allowed) return tally(out.tally, r, true, m.response.status?.message);
      const patched = m.response.patch
        ? (fastJsonPatch.applyPatch(
            structuredClone(pod),
            JSON.parse(Buffer.from(m.response.patch, 'base64').toString('utf8')) as fastJsonPatch.Operation[],
          ).newDocument as Obj)
        : pod;
      const v = await caller.call('validate', admissionReview(patched, `v-${k}`));
      out.calls++;
      out.validate.push(v.ms);
      tally(out.tally, r, !v.response.allowed, v.response.status?.message);
    } catch (e) {
      out.tally.errors++;
      if (out.tally.wrong.length < 5) out.tally.wrong.push(`${r.pod.namespace}/${r.pod.name}: ${(e as Error).message}`);
    }
  };
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  const pending: Array<Promise<void>> = [];
  for (let n = 0; n < total; n++) {
    const due = t0 + n * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    while (inFlight >= maxInFlight) await sleep(1);
    if (performance.now() - due > intervalMs) out.late++;
    inFlight++;
    pending.push(one(kFrom + n).finally(() => inFlight--));
    if (pending.length > 1000) await Promise.all(pending.splice(0, pending.length - 100));
  }
  await Promise.all(pending);
  out.seconds = (performance.now() - t0) / 1000;
  out.cpuSeconds = cpuSeconds(pid) - c0;
  caller.close();
  return out;
}

export function merge(a: DriveResult | undefined, b: DriveResult): DriveResult {
  if (!a) return b;
  const t = a.tally;
  const u = b.tally;
  return {
    pods: a.pods + b.pods,
    calls: a.calls + b.calls,
    seconds: a.seconds + b.seconds,
    cpuSeconds: a.cpuSeconds + b.cpuSeconds,
    mutate: [...a.mutate, ...b.mutate],
    validate: [...a.validate, ...b.validate],
    late: a.late + b.late,
    tally: {
      collisions: t.collisions + u.collisions,
      collisionsDenied: t.collisionsDenied + u.collisionsDenied,
      fresh: t.fresh + u.fresh,
      freshDenied: t.freshDenied + u.freshDenied,
      errors: t.errors + u.errors,
      wrong: [...t.wrong, ...u.wrong].slice(0, 5),
    },
  };
}
