// The audit reads the DeviceClasses and ResourceClaimTemplates the webhook reads (issue 25): a pod
// whose network's device is claimed from a template its namespace lacks is denied at admission
// (claimTemplateExists), so the audit reports it; unknown templates stay unchecked (no finding).
import t from 'tap';
import { auditSnapshot } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { StaticDraView } from '../../src/dra/index.js';
import { nadFromObject } from '../../src/nads/index.js';
import { EMPTY_POLICY_SET } from '../../src/policy/index.js';
import { nad as nadObject } from '../check/helpers.js';
import { live } from './helpers.js';

const claimed = nadFromObject(
  nadObject('claimed', {
    namespace: 'team-a',
    resourceName: 'example.com/net_claimed',
    annotations: { 'netattach.io/resourceClaimTemplate': 'net-claimed' },
  }),
);
const judge = (dra?: StaticDraView) =>
  auditSnapshot({
    pods: [live('team-a', 'p', 'claimed')],
    nads: [claimed],
    policies: EMPTY_POLICY_SET,
    config: DEFAULT_ADMISSION_CONFIG,
    ...(dra ? { dra } : {}),
  })[0]!.findings.map((f) => `${f.rule}/${f.result}`);

t.test('a template the namespace lacks: the finding admission denies with', async (t) => {
  t.same(judge(new StaticDraView([], [{ namespace: 'team-b', name: 'net-claimed' }])), ['claimTemplateExists/fail']);
});

t.test('the template exists: clean; templates not read: unchecked, no finding', async (t) => {
  t.same(judge(new StaticDraView([], [{ namespace: 'team-a', name: 'net-claimed' }])), []);
  t.same(judge(), []);
});
