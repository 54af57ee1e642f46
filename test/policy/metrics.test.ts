import t from 'tap';
import { Registry } from 'prom-client';
import { AddressIndex, PolicyEngine, policySet, registerPolicyMetrics, FilePolicySource } from '../../src/policy/index.js';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { input, policies, policyYaml } from './helpers.js';

t.test('the engine counts no findings (the server does); index size; invalid documents', async (t) => {
  const registry = new Registry();
  const metrics = registerPolicyMetrics(registry);
  const index = new AddressIndex();
  index.setPod({ namespace: 'ns', name: 'p' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'ns/a' }]);
  metrics.watchIndex(index);
  const set = policySet(
    policies(policyYaml('cap', 'rules:\n  maxAttachments: {max: 0, action: Warn}\n  interfaceNames: {allowed: [net*], action: Audit}')),
  );
  const engine = new PolicyEngine({ policies: set, index });
  t.equal(engine.evaluate(input('a@eth0')).findings.length, 2);
  const text = await registry.metrics();
  t.notMatch(text, 'netattach_policy_findings_total', 'counted once by the server, from the final decision');
  t.notMatch(text, 'netattach_policy_evaluations_total');
  t.match(text, 'netattach_address_index_entries{entry="pods"} 1');

  const dir = mkdtempSync(join(tmpdir(), 'netattach-metrics-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `${policyYaml('ok', 'rules: {}')}---\n${policyYaml('broken', 'rules: {maxAttachments: {}}')}`);
  const source = new FilePolicySource(file, { metrics });
  await source.start();
  t.teardown(() => source.stop());
  const after = await registry.metrics();
  t.match(after, `netattach_policies_loaded{source="file:${file}"} 1`);
  t.match(after, `netattach_policy_invalid_total{source="file:${file}",policy="broken"} 1`);
});
