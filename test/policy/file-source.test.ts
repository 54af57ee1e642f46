import t from 'tap';
import { mkdtempSync, writeFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilePolicySource, PolicyEngine, type PolicySet, type PolicyLogger } from '../../src/policy/index.js';
import { input, policyYaml } from './helpers.js';

const names = (s: PolicySet): string[] => s.policies.map((p) => p.name);

function capture(): PolicyLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (_o: object, msg: string): void => void lines.push(msg);
  return { lines, info: log, warn: log, error: log };
}

/** Resolves with the next set a source publishes. */
const nextChange = (s: FilePolicySource): Promise<PolicySet> => new Promise((resolve) => s.onChange(resolve));

t.test('file source: load, live reload, invalid versions ignored', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-policy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policies.yaml');
  const a = policyYaml('a', 'rules:\n  maxAttachments: {max: 1}');
  const b = policyYaml('b', 'rules:\n  maxAttachments: {max: 5, action: Warn}');
  writeFileSync(file, `${a}---\n${b}`);
  const logger = capture();
  const source = new FilePolicySource(file, { logger, debounceMs: 20 });
  const engine = new PolicyEngine();
  source.onChange((s) => engine.setPolicies(s));
  await source.start();
  t.teardown(() => source.stop());
  engine.setPolicies(source.current());
  t.same(names(source.current()), ['a', 'b']);
  t.equal(engine.evaluate(input('x,y')).findings.length, 1);

  // New version of a is invalid: the old a stays; b changes.
  let changed = nextChange(source);
  writeFileSync(
    file,
    `${policyYaml('a', 'rules:\n  maxAttachments: {max: -1}')}---\n${policyYaml('b', 'rules:\n  maxAttachments: {max: 0, action: Warn}')}`,
  );
  await changed;
  t.same(names(source.current()), ['a', 'b']);
  t.equal(source.current().policies[0]!.rules.maxAttachments?.max, 1, 'last valid version of a kept');
  t.equal(source.current().policies[1]!.rules.maxAttachments?.max, 0, 'b updated');
  t.match(source.errors()[0]!.message, 'policy "a"');
  t.ok(logger.lines.some((l) => l.includes('the previous valid version stays in force')));
  t.same(
    engine.evaluate(input('x')).findings.map((f) => `${f.policy}/${f.action}`),
    ['b/Warn'],
    'engine follows the reload',
  );

  // Replace by rename (as editors and ConfigMap volumes do); a removed policy is gone.
  changed = nextChange(source);
  writeFileSync(join(dir, 'tmp'), b);
  renameSync(join(dir, 'tmp'), file);
  await changed;
  t.same(names(source.current()), ['b']);
  t.same(source.errors(), []);

  // A document too broken to name its policy: nothing in force is dropped.
  changed = nextChange(source);
  writeFileSync(file, `${a}---\nkind: [\n`);
  await changed;
  t.same(names(source.current()), ['a', 'b']);
  t.equal(source.errors().length, 1);

  // Unreadable file: policies kept.
  rmSync(file);
  await source.reload();
  t.same(names(source.current()), ['a', 'b']);
});

t.test('file source: a missing file fails start', async (t) => {
  await t.rejects(new FilePolicySource('/nonexistent/netattach/policies.yaml').start());
});
