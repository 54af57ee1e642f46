// Observe mode over real HTTPS with the real core: what enforce denies is admitted unchanged with
// the reasons as warnings, logged and counted; what passes is mutated as usual.
import t from 'tap';
import { StaticNadSource } from '../../src/nads/index.js';
import { observed, OBSERVE_NOTE } from '../../src/admission/index.js';
import { getHttp, podReview, request, NETWORKS } from './fixtures.js';
import { startServer } from './harness.js';

const nadObject = {
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name: 'sriov-a', namespace: 'default', annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' } },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'sriov-a', type: 'sriov', capabilities: { ips: true } }) },
};

const start = (t: Parameters<typeof startServer>[0], enforcement: 'enforce' | 'observe') =>
  startServer(t, { options: { enforcement }, deps: { core: undefined, nadSource: new StaticNadSource([nadObject]) } });

// Each is denied in enforce mode: a missing NAD (403), a GUID no plugin of the chain reads (403),
// a malformed annotation (422).
const DENIED = [
  { what: 'missing NAD', annotation: 'nope' },
  { what: 'GUID the chain ignores', annotation: '[{"name":"sriov-a","infiniband-guid":"00:11:22:33:44:55:66:77"}]' },
  { what: 'malformed annotation', annotation: 'sriov-a,,' },
];

t.test('enforce denies, observe admits the same requests unchanged with the reasons as warnings', async (t) => {
  const enforce = await start(t, 'enforce');
  const observe = await start(t, 'observe');
  for (const { what, annotation } of DENIED) {
    for (const endpoint of ['mutate', 'validate']) {
      const body = JSON.stringify(podReview({ annotations: { [NETWORKS]: annotation } }));
      const denied = await request(`${enforce.url}/${endpoint}`, body, { ca: enforce.ca });
      t.equal(denied.json.response.allowed, false, `${what} ${endpoint}: enforce denies`);
      const admitted = await request(`${observe.url}/${endpoint}`, body, { ca: observe.ca });
      t.equal(admitted.json.response.allowed, true, `${what} ${endpoint}: observe admits`);
      t.notOk('patch' in admitted.json.response, `${what} ${endpoint}: admitted unchanged (no patch)`);
      const warnings = admitted.json.response.warnings as string[];
      t.match(warnings[0], new RegExp(`^${OBSERVE_NOTE}`));
      // The first reason of the denial is among the warnings.
      const reason =
        String(denied.json.response.status.message)
          .split('\n')
          .find((l: string) => l.startsWith('- ')) ?? String(denied.json.response.status.message);
      t.ok(
        warnings.some((w) => reason.replace(/^- /, '').startsWith(w.replace(/\.\.\.$/, ''))),
        `${what}: the first reason is among the warnings`,
      );
    }
  }
  t.ok(observe.logs.lines.some((l) => l.msg === 'would deny (observe mode); admitted'));
  const metrics = (await getHttp(`${observe.healthUrl}/metrics`)).text;
  t.match(metrics, /netattach_admission_would_deny_total\{reason="networkExists"\} 2/);
  t.match(metrics, /netattach_admission_would_deny_total\{reason="capabilities"\} 2/);
  t.match(metrics, /netattach_admission_would_deny_total\{reason="validation"\} 2/);
  t.notMatch(metrics, /netattach_admission_denials_total\{/, 'observe mode denies nothing');
});

t.test('observe mode still mutates what it admits anyway', async (t) => {
  const observe = await start(t, 'observe');
  const ok = await request(`${observe.url}/mutate`, JSON.stringify(podReview({ annotations: { [NETWORKS]: 'sriov-a' } })), {
    ca: observe.ca,
  });
  t.equal(ok.json.response.allowed, true);
  t.match(Buffer.from(ok.json.response.patch, 'base64').toString(), /intel\.com\/sriov_a/);
  t.notOk(ok.json.response.warnings);
});

t.test('observed(): an allowed decision is returned as is; a denial loses its patch, claims and code', async (t) => {
  const allowed = {
    allowed: true,
    errors: [],
    warnings: [],
    audits: [],
    findings: [],
    patch: [{ op: 'add' as const, path: '/x', value: 1 }],
    addresses: [],
  };
  t.equal(observed(allowed), allowed);
  const out = observed({
    ...allowed,
    allowed: false,
    code: 503,
    errors: [{ path: 'a', type: 'Internal error', reason: 'r' }],
    addresses: [{ kind: 'mac', value: 'v', scope: 'cluster', pod: { namespace: 'n' } }],
  });
  t.same(out.patch, []);
  t.same(out.addresses, []);
  t.same(out.errors, []);
  t.notOk('code' in out);
  t.match(out.warnings, [{ note: { text: /HTTP 503/ } }, { field: { path: 'a' } }]);
});
