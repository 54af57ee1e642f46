/**
 * The runtime oracle: the reference CNI plugins (containernetworking/plugins v1.10.0, built by
 * infra/build-cni.sh) run each pod of the corpus (cni/corpus.ts) and of a fast-check generator
 * (cni/generator.ts) in fresh network namespaces, called as Multus v4.3.0 calls a delegate
 * (infra/cni-invoke), and netattach's verdict on the same pod and NADs (the engine `serve` runs)
 * must agree with what happened (cni/model.ts):
 * - no false denial: netattach denies, the ADD succeeds and applies what was asked;
 * - no missed failure or silent drop, unless docs/cni-runtime.md lists it as a known limit with
 *   its reason, or cni/pending.ts lists it as a class another branch closes (then it must still
 *   mismatch, so the entry is deleted once the fix lands).
 *
 * Needs root (network namespaces, veth, bridge, macvlan); elsewhere it fails with one message
 * saying so. `NETATTACH_E2E_CNI_RUNS` sets the generator's runs (default 40).
 *
 *   npm run test:e2e    or alone:    npx tap --disable-coverage test/e2e/cni-oracle.e2e.ts
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { CHAINS } from './cni/chains.js';
import { CORPUS } from './cni/corpus.js';
import { selectionArb } from './cni/generator.js';
import { knownLimits, KNOWN_LIMIT_CASES } from './cni/limits.js';
import { compare, type Comparison, type Execution, type Selection, type Verdict } from './cni/model.js';
import { PENDING, pendingClassOf } from './cni/pending.js';
import { execute, unavailableReason } from './cni/runtime.js';
import { verdictOver } from './cni/verdict.js';
import { REPO } from './lib/netattach.js';

const RUNS = Number(process.env.NETATTACH_E2E_CNI_RUNS || 40);

/** The plugins' bin directory: $NETATTACH_E2E_CNI_BIN, else infra/build-cni.sh (instant when cached). */
async function binDir(): Promise<string> {
  if (process.env.NETATTACH_E2E_CNI_BIN) return process.env.NETATTACH_E2E_CNI_BIN;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(REPO, 'test/e2e/infra/build-cni.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`build-cni.sh exited with ${code}`)),
    );
  });
}

/** `fn` over `items`, `width` at a time, results in the items' order. */
async function inParallel<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

const bin = await binDir();
const unavailable = await unavailableReason(bin);
if (unavailable) {
  // Not a silent pass: CI runs as root, and a machine that cannot run the oracle says so.
  t.fail(`the CNI runtime oracle cannot run here: ${unavailable}`);
} else {
  const verdict = verdictOver(CHAINS);
  const limits = knownLimits(readFileSync(path.join(REPO, 'docs/cni-runtime.md'), 'utf8'));
  const pendingIds = new Map(PENDING.map((p) => [p.id, p]));
  const counts = { agree: 0, pending: 0, limit: 0, generated: 0 };
  const started = Date.now();

  const judge = (sel: readonly Selection[], annotation?: string): Promise<{ v: Verdict; run: Execution; cmp: Comparison }> =>
    execute(bin, CHAINS, sel).then((run) => {
      const v = verdict(sel, annotation);
      return { v, run, cmp: compare(sel, v, run) };
    });

  t.test('the known limits of docs/cni-runtime.md are the ones the corpus cites', async (t) => {
    t.ok(limits.size > 0, `docs/cni-runtime.md lists known limits with their reasons: ${[...limits].join(', ')}`);
    for (const [id, limit] of Object.entries(KNOWN_LIMIT_CASES)) {
      t.ok(limits.has(limit), `${id}: known limit "${limit}" is listed in docs/cni-runtime.md with its reason`);
    }
  });

  t.test(`corpus: ${CORPUS.length} pods, verdict against execution`, async (t) => {
    // Two pods at a time (each in its own namespaces): most of a pod's time is spent spawning.
    const results = await inParallel(CORPUS, 2, (c) => judge(c.selections, c.annotation));
    for (const [i, c] of CORPUS.entries()) {
      const { run, cmp } = results[i]!;
      const label = `${c.id} (${c.rule}): ${cmp.summary}`;
      // A DEL after a failed ADD may fail too (bridge cannot delete "lo"); after a good one it must not.
      if (run.added) t.same(run.delErrors, [], `${c.id}: DEL cleans up`);
      const pending = pendingIds.get(c.id);
      const limit = KNOWN_LIMIT_CASES[c.id];
      if (cmp.mismatch === 'false-denial') {
        t.fail(`FALSE DENIAL ${label}`);
      } else if (pending) {
        counts.pending++;
        t.ok(
          cmp.mismatch,
          `pending (${pending.class}, branch ${pending.branch}): still mismatches, delete it from cni/pending.ts once fixed: ${label}`,
        );
      } else if (limit) {
        counts.limit++;
        t.ok(cmp.mismatch, `known limit "${limit}": still mismatches: ${label}`);
      } else {
        if (!cmp.mismatch) counts.agree++;
        t.notOk(cmp.mismatch, `${cmp.mismatch ?? 'agrees'}: ${label}`);
      }
    }
  });

  t.test(`generator: ${RUNS} generated pods`, async (t) => {
    const failures: string[] = [];
    await fc
      .assert(
        fc.asyncProperty(selectionArb, async (sel) => {
          counts.generated++;
          const { run, cmp } = await judge([sel]);
          if (!cmp.mismatch && (!run.added || run.delErrors.length === 0)) return true;
          // Excused only while the class still has a pending case: a closed class excuses nothing.
          const cls = cmp.mismatch && cmp.mismatch !== 'false-denial' ? pendingClassOf(sel, run, cmp) : undefined;
          if (cls && PENDING.some((p) => p.class === cls)) return true;
          failures.push(`${cmp.mismatch ?? 'DEL failed'}: ${JSON.stringify(sel)}: ${cmp.summary} ${run.delErrors.join('; ')}`);
          return false;
        }),
        // No shrinking: every run executes plugins; the first counterexample is reported whole.
        { numRuns: RUNS, endOnFailure: true },
      )
      .catch((err: Error) => t.fail(`${failures.join('\n') || err.message}`));
    t.pass(`${counts.generated} generated pods agree (or fall in a pending class)`);
  });

  t.teardown(() => {
    const s = ((Date.now() - started) / 1000).toFixed(1);
    t.comment(
      `cni oracle: ${CORPUS.length} corpus pods (${counts.agree} agree, ${counts.pending} pending, ${counts.limit} known limits), ${counts.generated} generated, in ${s} s`,
    );
  });
}
