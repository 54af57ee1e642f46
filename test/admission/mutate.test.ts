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

t.test('draOnlyWithoutClaims: exact warnings, an empty claims list, and chains that run without a device', async (t) => {
  const { draOnlyWithoutClaims } = await import('../../src/admission/mutate.js');
  const found = (...objects: object[]) => {
    const lookup = nadLookup(...objects);
    return (value: string) =>
      nets(value).map((net) => {
        const l = lookup(net.selection.namespace, net.selection.name);
        if (l.status !== 'found') throw new Error(value);
        return { net, nad: l.nad };
      });
  };
  const sriov = { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'sriov' }] };
  const macvlan = { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan', master: 'eth1' }] };
  const attach = found(
    nadObject('two', { resourceName: 'vf-a, vf-b', config: sriov }),
    nadObject('mv', { resourceName: 'vf-a', config: macvlan }),
  );
  const warning = {
    path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0]',
    text: 'default/two: resourceName vf-a, vf-b is no extended resource name, so nothing is requested for it, and the pod has no resourceClaims: Multus will find no device for it',
  };
  const plain = pod({ networks: 'two' }) as Obj;
  t.strictSame(draOnlyWithoutClaims(plain, attach('two')), [warning]);
  plain.spec.resourceClaims = [];
  t.strictSame(draOnlyWithoutClaims(plain, attach('two')), [warning], 'an empty claims list is no claim');
  plain.spec.resourceClaims = [{ name: 'c', resourceClaimTemplateName: 't' }];
  t.strictSame(draOnlyWithoutClaims(plain, attach('two')), [], 'a claim may hold the device');
  t.strictSame(draOnlyWithoutClaims(pod({ networks: 'mv' }) as Obj, attach('mv')), [], 'macvlan runs without a device');
});

t.test('mutatePod passes on the warnings of the claim checks and of the claims it adds', async (t) => {
  const TEMPLATE_NAD = nadLookup(
    nadObject('claimed', { resourceName: 'example.com/net_claimed', annotations: { [TEMPLATE]: 'net-claimed' } }),
    nadObject('net', { resourceName: SRIOV }),
  );
  const p = pod({ networks: 'claimed', annotations: { 'kubectl.kubernetes.io/default-container': 'nope' } }) as Obj;
  const added = mutatePod(p, nets('claimed'), TEMPLATE_NAD, DEFAULT_ADMISSION_CONFIG, withView);
  t.ok(
    added.warnings.some((w) => w.text === 'no container "nope"; resources go to the first one'),
    JSON.stringify(added.warnings),
  );
  const own = pod({ networks: 'net', annotations: { 'netattach.io/networkClaims': 'net=mine' } }) as Obj;
  own.spec.resourceClaims = [{ name: 'mine', resourceClaimName: 'shared' }];
  const claimed = mutatePod(own, nets('net'), TEMPLATE_NAD, DEFAULT_ADMISSION_CONFIG, withView);
  t.ok(
    claimed.warnings.some((w) => w.text === `pod claim mine for default/net (${SRIOV}) unchecked: netattach does not read ResourceClaims`),
    JSON.stringify(claimed.warnings),
  );
});
