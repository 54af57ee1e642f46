// mutatePod (src/admission/mutate.ts): the mutators write into a PodDraft, diffed into the patch;
// no patch when there are errors or findings, and no claims added once there are errors.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { mutatePod } from '../../src/admission/mutate.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/types.js';
import { StaticDraView } from '../../src/dra/index.js';
import { nadLookup, nadObject, pod } from './fixtures.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SRIOV = 'intel.com/sriov_a';
const TEMPLATE = 'netattach.io/resourceClaimTemplate';
const nads = nadLookup(
  nadObject('sriov-a', { resourceName: SRIOV }),
  nadObject('zone-a', { resourceName: SRIOV, nodeSelector: 'topology.kubernetes.io/zone=a' }),
  nadObject('zone-b', { resourceName: SRIOV, nodeSelector: 'topology.kubernetes.io/zone=b' }),
  nadObject('claimed', { resourceName: 'example.com/net_claimed', annotations: { [TEMPLATE]: 'net-claimed' } }),
);
const nets = (value: string) => parseNetworks(value, { namespace: 'default' }).networks;
const withView = { namespace: 'default', view: new StaticDraView([], [{ namespace: 'default', name: 'net-claimed' }]) };
const noTemplates = { namespace: 'default', view: new StaticDraView([], []) };

t.test('a pod that needs a device gets a patch', async (t) => {
  const r = mutatePod(pod({ networks: 'sriov-a' }), nets('sriov-a'), nads, DEFAULT_ADMISSION_CONFIG);
  t.strictSame(r.errors, []);
  t.ok(r.patch.length > 0, 'patched');
});

t.test('no patch when there are errors', async (t) => {
  const p = pod({ networks: 'zone-a,zone-b' });
  const r = mutatePod(p, nets('zone-a,zone-b'), nads, DEFAULT_ADMISSION_CONFIG);
  t.equal(r.errors.length, 1, 'the nodeSelector conflict');
  t.strictSame(r.findings, []);
  t.strictSame(r.patch, []);
});

t.test('no patch when there are findings', async (t) => {
  const r = mutatePod(pod({ networks: 'claimed' }), nets('claimed'), nads, DEFAULT_ADMISSION_CONFIG, noTemplates);
  t.strictSame(r.errors, []);
  t.equal(r.findings.length, 1, 'the missing template');
  t.strictSame(r.patch, []);
  const ok = mutatePod(pod({ networks: 'claimed' }), nets('claimed'), nads, DEFAULT_ADMISSION_CONFIG, withView);
  t.strictSame([ok.errors, ok.findings], [[], []]);
  t.ok(ok.patch.length > 0, 'with the template, patched');
});

t.test('no claims are added once there are errors', async (t) => {
  const p = pod({ networks: 'zone-a,zone-b,claimed' });
  (p['spec'] as Obj)['resourceClaims'] = 'not a list';
  const n = nets('zone-a,zone-b,claimed');
  const r = mutatePod(p, n, nads, DEFAULT_ADMISSION_CONFIG, withView);
  t.strictSame(
    r.errors.map((e) => e.path),
    [n[1]!.path],
    'only the conflict (at zone-b), none from adding claims',
  );
});

t.test('without DRA input, the namespace is empty and templates go unchecked', async (t) => {
  const r = mutatePod(pod({ networks: 'claimed' }), nets('claimed'), nads, DEFAULT_ADMISSION_CONFIG);
  t.strictSame(
    r.warnings.map((w) => w.text),
    ['ResourceClaimTemplate /net-claimed unchecked: netattach does not read templates here'],
  );
});
