// The pure half of the address Leases (src/policy/address-leases.ts) and of the sharing owners
// (src/policy/owner.ts), value by value: the documented bounds, the Lease object an address is held by and
// read back from, who holds a Lease, when it is stale, and the message each outcome adds. The store
// that uses them, over a fake Lease API, is in address-leases.test.ts and address-lease-store.test.ts; this file
// imports no I/O, so a mutation run (part `policy-address-leases`) starts it in a few seconds.
import t from 'tap';
import * as leases from '../../src/policy/address-leases.js';
import { DEFAULT_SHARING_OWNERS, parseSharingOwners, sharingOwnerOf } from '../../src/policy/owner.js';
import type { HeldAddress, Action } from '../../src/policy/types.js';

const GUID = '00:11:22:33:44:55:66:77';
const MAC = '02:00:00:00:00:01';

function address(
  opts: { kind?: 'mac' | 'infiniband-guid'; value?: string; action?: Action; scope?: 'Network' | 'Cluster'; pod?: HeldAddress['pod'] } = {},
): HeldAddress {
  const kind = opts.kind ?? 'mac';
  const value = opts.value ?? (kind === 'mac' ? MAC : GUID);
  return {
    kind,
    value,
    scope: 'network:team/a',
    pod: opts.pod ?? { namespace: 'team', name: 'web', uid: 'u-web' },
    unique: {
      policy: 'p',
      action: opts.action ?? 'Enforce',
      scope: opts.scope ?? 'Network',
      path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac',
      label: `MAC ${value}`,
    },
  };
}

const wanted = (opts: Parameters<typeof address>[0] = {}): leases.WantedLease => leases.wantedLeases([address(opts)])[0]!;

t.test('the documented bounds (docs/policy.md "Bounds", docs/security.md "Address Leases")', async (t) => {
  t.strictSame(
    { ...leases.ADDRESS_LEASE_LIMITS },
    { inFlight: 32, background: 8, waiting: 512, unconfirmed: 4096, unconfirmedPerNamespace: 512 },
  );
  t.equal(leases.LEASE_LABEL, 'netattach.io/address-claim');
  t.strictSame(
    { ...leases.ANNOTATION },
    {
      kind: 'netattach.io/address-kind',
      address: 'netattach.io/address',
      scope: 'netattach.io/scope',
      holderKind: 'netattach.io/holder-kind',
      holder: 'netattach.io/holder',
      holderUid: 'netattach.io/holder-uid',
    },
  );
});

t.test('holderOf: the sharing owner, else the pod with a name and a uid, else nobody', async (t) => {
  const owner = { key: 'vmi-uid', label: 'VM team/vm1', namespace: 'team', kind: 'VirtualMachineInstance', name: 'vm1' };
  t.strictSame(leases.holderOf({ namespace: 'team', name: 'virt-launcher-vm1-x', uid: 'p1', owner }), {
    kind: 'VirtualMachineInstance',
    namespace: 'team',
    name: 'vm1',
    uid: 'vmi-uid',
  });
  t.strictSame(
    leases.holderOf({ namespace: 'team', owner }),
    { kind: 'VirtualMachineInstance', namespace: 'team', name: 'vm1', uid: 'vmi-uid' },
    'an owned pod needs no name of its own',
  );
  t.strictSame(leases.holderOf({ namespace: 'team', name: 'web', uid: 'u1' }), { kind: 'Pod', namespace: 'team', name: 'web', uid: 'u1' });
  t.equal(leases.holderOf({ namespace: 'team', name: 'web' }), undefined, 'no uid');
  t.equal(leases.holderOf({ namespace: 'team', name: 'web', uid: '' }), undefined, 'an empty uid');
  t.equal(leases.holderOf({ namespace: 'team', uid: 'u1', generateName: 'web-' }), undefined, 'no name yet');
  t.equal(leases.holderOf({ namespace: 'team', name: '', uid: 'u1' }), undefined, 'an empty name');
});

t.test("holderKey and sameHolder: kind, namespace and name; the uid is the callers'", async (t) => {
  const pod = { kind: 'Pod', namespace: 'ns', name: 'vm1', uid: 'u1' };
  t.equal(leases.holderKey(pod), 'Pod ns/vm1');
  t.equal(leases.holderKey({ kind: 'VirtualMachineInstance', namespace: 'a', name: 'b' }), 'VirtualMachineInstance a/b');
  const cases: Array<[string, Partial<typeof pod>, boolean]> = [
    ['identical', {}, true],
    ['another uid', { uid: 'u2' }, true],
    ['no uid', { uid: undefined }, true],
    ['another kind', { kind: 'VirtualMachineInstance' }, false],
    ['another namespace', { namespace: 'other' }, false],
    ['another name', { name: 'vm2' }, false],
  ];
  for (const [what, change, same] of cases) {
    t.equal(leases.sameHolder(pod, { ...pod, ...change }), same, what);
    t.equal(leases.sameHolder({ ...pod, ...change }, pod), same, `${what}, reversed`);
  }
});

t.test('leaseScope and leaseName: the scope is part of the name, the name is fixed and deterministic', async (t) => {
  t.equal(wanted({ scope: 'Cluster' }).scope, 'cluster');
  t.equal(wanted({ scope: 'Network' }).scope, 'network:team/a');
  t.equal(leases.leaseScope(address({ scope: 'Cluster' }) as leases.WantedLease['address']), 'cluster');
  t.equal(leases.leaseScope(address({ scope: 'Network' }) as leases.WantedLease['address']), 'network:team/a');
  // sha256("cluster\n00:11:22:33:44:55:66:77") and sha256("network:team/a\n02:00:00:00:00:01"), first 40 hex digits.
  t.equal(leases.leaseName('infiniband-guid', 'cluster', GUID), 'guid-ed1836211e1016be7f210da2e65f67831f3e2290');
  t.equal(leases.leaseName('mac', 'network:team/a', MAC), 'mac-e759d5dc950ccb382be516cb64e0fce925f1cd44');
  t.equal(wanted().name, 'mac-e759d5dc950ccb382be516cb64e0fce925f1cd44', 'wantedLeases names the claim by kind, scope and value');
  t.equal(wanted({ kind: 'infiniband-guid', scope: 'Cluster' }).name, 'guid-ed1836211e1016be7f210da2e65f67831f3e2290');
});

t.test(
  'wantedLeases: Enforce and Warn claim, Audit and unjudged addresses do not, nor pods without a holder; one per name, the first',
  async (t) => {
    t.strictSame(leases.wantedLeases([]), []);
    t.strictSame(leases.wantedLeases([{ ...address(), unique: undefined }]), []);
    t.strictSame(leases.wantedLeases([address({ action: 'Audit' })]), []);
    t.strictSame(leases.wantedLeases([address({ pod: { namespace: 'team', name: 'web' } })]), []);
    const enforce = address({ action: 'Enforce' });
    t.strictSame(leases.wantedLeases([enforce]), [
      {
        name: 'mac-e759d5dc950ccb382be516cb64e0fce925f1cd44',
        address: enforce,
        holder: { kind: 'Pod', namespace: 'team', name: 'web', uid: 'u-web' },
        scope: 'network:team/a',
      },
    ]);
    const warn = address({ action: 'Warn' });
    t.equal(leases.wantedLeases([warn])[0]!.address, warn);
    // The same address twice: the first is kept. An Audit or unheld one in between does not stop the next.
    const other = address({ value: '02:00:00:00:00:02' });
    const got = leases.wantedLeases([
      address({ action: 'Audit', value: '02:00:00:00:00:09' }),
      address({ pod: { namespace: 'team' }, value: '02:00:00:00:00:08' }),
      warn,
      enforce,
      other,
    ]);
    t.equal(got.length, 2);
    t.equal(got[0]!.address, warn, 'the first of one name');
    t.equal(got[1]!.address, other);
  },
);

t.test('leaseObject: the Lease a claim is created as, to the field', async (t) => {
  const w = wanted();
  t.strictSame(leases.leaseObject(w, 'netattach-system', 35, new Date('2026-03-04T05:06:07.891Z')), {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: 'mac-e759d5dc950ccb382be516cb64e0fce925f1cd44',
      namespace: 'netattach-system',
      labels: { 'netattach.io/address-claim': 'true', 'app.kubernetes.io/managed-by': 'netattach' },
      annotations: {
        'netattach.io/address-kind': 'mac',
        'netattach.io/address': MAC,
        'netattach.io/scope': 'network:team/a',
        'netattach.io/holder-kind': 'Pod',
        'netattach.io/holder': 'team/web',
        'netattach.io/holder-uid': 'u-web',
      },
    },
    spec: { holderIdentity: 'Pod team/web', leaseDurationSeconds: 35, acquireTime: '2026-03-04T05:06:07.891000Z' },
  });
  const noUid = leases.leaseObject({ ...w, holder: { kind: 'Pod', namespace: 'team', name: 'web' } }, 'ns', 1, new Date(0)) as {
    metadata: { annotations: Record<string, string> };
  };
  t.notOk('netattach.io/holder-uid' in noUid.metadata.annotations, 'no uid: no uid annotation');
  const emptyUid = leases.leaseObject({ ...w, holder: { kind: 'Pod', namespace: 'team', name: 'web', uid: '' } }, 'ns', 1, new Date(0)) as {
    metadata: { annotations: Record<string, string> };
  };
  t.notOk('netattach.io/holder-uid' in emptyUid.metadata.annotations, 'an empty uid: no uid annotation');
});

t.test('parseLease: a Lease read back, and what is not a claim', async (t) => {
  const metadata = (annotations: Record<string, unknown> | undefined, more: Record<string, unknown> = {}) => ({
    metadata: {
      name: 'n',
      uid: 'u',
      resourceVersion: '7',
      creationTimestamp: '2026-01-01T00:00:10Z',
      ...(annotations ? { annotations } : {}),
      ...more,
    },
  });
  const full = {
    'netattach.io/address-kind': 'mac',
    'netattach.io/address': MAC,
    'netattach.io/scope': 'cluster',
    'netattach.io/holder-kind': 'VirtualMachineInstance',
    'netattach.io/holder': 'team/vm1',
    'netattach.io/holder-uid': 'hu',
  };
  t.strictSame(leases.parseLease(metadata(full)), {
    name: 'n',
    uid: 'u',
    resourceVersion: '7',
    kind: 'mac',
    address: MAC,
    scope: 'cluster',
    holder: { kind: 'VirtualMachineInstance', namespace: 'team', name: 'vm1', uid: 'hu' },
    created: Date.parse('2026-01-01T00:00:10Z'),
  });
  t.strictSame(
    leases.parseLease(
      metadata(
        { 'netattach.io/address-kind': 'infiniband-guid', 'netattach.io/holder': 'team/a/b' },
        { resourceVersion: 7, creationTimestamp: 'yesterday' },
      ),
    ),
    {
      name: 'n',
      uid: 'u',
      resourceVersion: '',
      kind: 'infiniband-guid',
      address: '',
      scope: '',
      holder: { kind: 'Pod', namespace: 'team', name: 'a/b' },
      created: 0,
    },
    'defaults: no address, scope, holder kind or uid; a name after the first slash; a bad timestamp is 0',
  );
  t.strictSame(
    leases.parseLease(
      metadata(
        { ...full, 'netattach.io/address': 1, 'netattach.io/scope': true, 'netattach.io/holder-kind': 2, 'netattach.io/holder-uid': 3 },
        { creationTimestamp: undefined },
      ),
    )?.holder,
    { kind: 'Pod', namespace: 'team', name: 'vm1' },
    'annotations of other types are ignored',
  );
  t.match(leases.parseLease(metadata({ ...full, 'netattach.io/address': 1, 'netattach.io/scope': true }, { creationTimestamp: 5 })), {
    address: '',
    scope: '',
    created: 0,
  });
  t.equal(leases.parseLease(metadata({ ...full, 'netattach.io/holder': '/' }))!.holder.name, '', 'just a slash: empty parts');
  const notClaims: Array<[string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ['no metadata', {}],
    ['no name', { metadata: { uid: 'u', annotations: full } }],
    ['a name that is not a string', { metadata: { name: 1, uid: 'u', annotations: full } }],
    ['no uid', { metadata: { name: 'n', annotations: full } }],
    ['a uid that is not a string', { metadata: { name: 'n', uid: 1, annotations: full } }],
    ['no annotations', metadata(undefined)],
    ['no holder', metadata({ ...full, 'netattach.io/holder': undefined })],
    ['a holder that is not a string', metadata({ ...full, 'netattach.io/holder': ['team/vm1'] })],
    ['a holder without a slash', metadata({ ...full, 'netattach.io/holder': 'vm1' })],
    ['no kind', metadata({ ...full, 'netattach.io/address-kind': undefined })],
    ['another kind', metadata({ ...full, 'netattach.io/address-kind': 'ip' })],
  ];
  for (const [what, obj] of notClaims) t.equal(leases.parseLease(obj), undefined, what);
});

t.test("leaseIsStale and yieldsIn at the window's edges (--claim-pending, 35 s by default)", async (t) => {
  const window = 35_000;
  const c = { created: 1_000_000 } as leases.StoredLease;
  const at = (age: number) => c.created + age;
  const cases: Array<[leases.HolderState, number, boolean]> = [
    ['unconfirmed', -1, false],
    ['unconfirmed', 0, false],
    ['unconfirmed', window - 1, false],
    ['unconfirmed', window, false],
    ['unconfirmed', window + 1, true],
    ['unconfirmed', 2 * window, true],
    ['gone', -1_000, true],
    ['gone', 0, true],
    ['live', window + 1, false],
    ['live', 100 * window, false],
  ];
  for (const [state, age, stale] of cases) t.equal(leases.leaseIsStale(c, state, at(age), window), stale, `${state}, ${age} ms old`);
  t.equal(leases.yieldsIn(c, at(0), window), 35_000);
  t.equal(leases.yieldsIn(c, at(1), window), 34_999);
  t.equal(leases.yieldsIn(c, at(window), window), 0);
  t.equal(leases.yieldsIn(c, at(window + 5), window), 0, 'never negative');
  t.equal(leases.yieldsIn(c, at(-5), window), 35_005);
});

t.test('outcomeFinding: what each outcome adds to the decision', async (t) => {
  const w = wanted();
  const path = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac';
  const prefix = `policy "p" (uniqueAddresses): MAC ${MAC} is already used by`;
  t.equal(leases.outcomeFinding({ wanted: w, result: 'won' }, 'team'), undefined);

  const pod = { kind: 'Pod', namespace: 'team', name: 'db' };
  t.strictSame(leases.outcomeFinding({ wanted: w, result: 'lost', holder: pod, live: true }, 'team'), {
    finding: {
      policy: 'p',
      rule: 'uniqueAddresses',
      action: 'Enforce',
      error: { path, type: 'Forbidden', reason: `${prefix} pod team/db (running) on network team/a (scope Network)` },
    },
    unavailable: false,
  });
  const lost = (o: Partial<Extract<leases.LeaseOutcome, { result: 'lost' }>>, ns = 'team', ww = w) =>
    leases.outcomeFinding({ wanted: ww, result: 'lost', holder: pod, live: false, ...o }, ns)!.finding.error.reason;
  t.equal(
    lost({ live: true, yieldsInMs: 5_000 }),
    `${prefix} pod team/db (running) on network team/a (scope Network)`,
    'a live holder does not yield',
  );
  t.equal(lost({}), `${prefix} pod team/db (being created) on network team/a (scope Network)`, 'no time known: none said');
  t.equal(
    lost({ yieldsInMs: 0 }),
    `${prefix} pod team/db (being created) on network team/a (scope Network); unless that pod appears, its claim yields in 1 s`,
    'at least 1 s',
  );
  t.equal(
    lost({ yieldsInMs: 1_000 }),
    `${prefix} pod team/db (being created) on network team/a (scope Network); unless that pod appears, its claim yields in 1 s`,
  );
  t.equal(
    lost({ yieldsInMs: 1_001 }),
    `${prefix} pod team/db (being created) on network team/a (scope Network); unless that pod appears, its claim yields in 2 s`,
    'rounded up',
  );
  t.equal(
    lost({ yieldsInMs: 34_200 }),
    `${prefix} pod team/db (being created) on network team/a (scope Network); unless that pod appears, its claim yields in 35 s`,
  );
  t.equal(lost({}, 'other'), `${prefix} a pod in another namespace (being created) on network team/a (scope Network)`);
  const cluster = wanted({ scope: 'Cluster' });
  t.equal(
    lost({ live: true }, 'team', cluster),
    `${prefix} pod team/db (running) (scope Cluster)`,
    'a cluster-wide claim names no network',
  );
  const vmi = { kind: 'VirtualMachineInstance', namespace: 'team', name: 'vm1', uid: 'vu' };
  t.equal(lost({ holder: vmi, live: true }), `${prefix} VM team/vm1 (a pod running) on network team/a (scope Network)`);
  t.equal(lost({ holder: vmi }, 'other'), `${prefix} a pod in another namespace (a pod being created) on network team/a (scope Network)`);
  t.equal(
    lost({ holder: { kind: 'Widget', namespace: 'team', name: 'w1' }, live: true }),
    `${prefix} Widget team/w1 (a pod running) on network team/a (scope Network)`,
    'other owners by their kind',
  );
  t.equal(
    lost({ holder: { kind: 'Widget', namespace: 'team', name: 'w1' }, live: true }, 'other'),
    `${prefix} a pod in another namespace (a pod running) on network team/a (scope Network)`,
    'an owner of another namespace is not named',
  );
  const warnLost = leases.outcomeFinding({ wanted: wanted({ action: 'Warn' }), result: 'lost', holder: pod, live: true }, 'team')!;
  t.equal(warnLost.finding.action, 'Warn', "the rule's action");
  t.equal(warnLost.unavailable, false);

  t.strictSame(
    leases.outcomeFinding({ wanted: w, result: 'not-claimed', count: 3, limit: 64 }, 'team'),
    {
      finding: {
        policy: 'p',
        rule: 'uniqueAddresses',
        action: 'Warn',
        error: {
          path,
          type: 'Too many',
          reason:
            'policy "p" (uniqueAddresses): 3 addresses from here on were judged against running pods only, not claimed across replicas (at most 64 per pod are)',
        },
      },
      unavailable: false,
    },
    "never a denial, whatever the rule's action",
  );

  t.strictSame(leases.outcomeFinding({ wanted: w, result: 'unavailable', reason: 'boom' }, 'team'), {
    finding: {
      policy: 'p',
      rule: 'uniqueAddresses',
      action: 'Enforce',
      error: {
        path,
        type: 'Internal error',
        reason: `policy "p" (uniqueAddresses): MAC ${MAC} could not be claimed in the API server (boom); retry`,
      },
    },
    unavailable: true,
  });
  t.strictSame(leases.outcomeFinding({ wanted: wanted({ action: 'Warn' }), result: 'unavailable', reason: 'boom' }, 'team'), {
    finding: {
      policy: 'p',
      rule: 'uniqueAddresses',
      action: 'Warn',
      error: {
        path,
        type: 'Internal error',
        reason: `policy "p" (uniqueAddresses): MAC ${MAC} could not be claimed in the API server (boom); admitted without the check across replicas`,
      },
    },
    unavailable: false,
  });
});

t.test('sharingOwnerOf: the controller reference, if its group/Kind shares addresses', async (t) => {
  const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vu', controller: true };
  const kinds = ['kubevirt.io/VirtualMachineInstance'];
  t.strictSame(DEFAULT_SHARING_OWNERS, ['kubevirt.io/VirtualMachineInstance']);
  t.strictSame(sharingOwnerOf({ ownerReferences: [vmi] }, DEFAULT_SHARING_OWNERS, 'team'), {
    key: 'vu',
    label: 'VM team/vm1',
    namespace: 'team',
    kind: 'VirtualMachineInstance',
    name: 'vm1',
  });
  const cases: Array<[string, unknown, readonly string[], unknown]> = [
    ['no owners to share', { ownerReferences: [vmi] }, [], undefined],
    ['no metadata', undefined, kinds, undefined],
    ['metadata null', null, kinds, undefined],
    ['metadata an array', [vmi], kinds, undefined],
    ['metadata a string', 'x', kinds, undefined],
    ['no references', {}, kinds, undefined],
    ['references not a list', { ownerReferences: { 0: vmi } }, kinds, undefined],
    ['empty references', { ownerReferences: [] }, kinds, undefined],
    ['references not objects, then the controller', { ownerReferences: [null, 'x', [vmi], 7, vmi] }, kinds, 'vu'],
    ['not the controller', { ownerReferences: [{ ...vmi, controller: false }] }, kinds, undefined],
    ['controller "true" as text', { ownerReferences: [{ ...vmi, controller: 'true' }] }, kinds, undefined],
    ['controller missing', { ownerReferences: [{ ...vmi, controller: undefined }] }, kinds, undefined],
    ['a non-controller first', { ownerReferences: [{ ...vmi, uid: 'x', controller: false }, vmi] }, kinds, 'vu'],
    ['the first controller decides', { ownerReferences: [{ ...vmi, apiVersion: 'apps/v1', kind: 'ReplicaSet' }, vmi] }, kinds, undefined],
    ['a controller with a bad apiVersion decides', { ownerReferences: [{ ...vmi, apiVersion: 1 }, vmi] }, kinds, undefined],
    ['a controller with a bad kind decides', { ownerReferences: [{ ...vmi, kind: 1 }, vmi] }, kinds, undefined],
    [
      'a controller whose kind is a list decides',
      { ownerReferences: [{ ...vmi, kind: ['VirtualMachineInstance'] }, vmi] },
      kinds,
      undefined,
    ],
    ['a controller with no name decides', { ownerReferences: [{ ...vmi, name: undefined }, vmi] }, kinds, undefined],
    ['a controller with an empty name decides', { ownerReferences: [{ ...vmi, name: '' }, vmi] }, kinds, undefined],
    ['the group is compared', { ownerReferences: [{ ...vmi, apiVersion: 'example.io/v1' }] }, kinds, undefined],
    ['the kind is compared', { ownerReferences: [{ ...vmi, kind: 'VirtualMachine' }] }, kinds, undefined],
  ];
  for (const [what, md, owners, key] of cases) t.equal(sharingOwnerOf(md, owners, 'team')?.key, key, what);
  t.strictSame(
    sharingOwnerOf({ ownerReferences: [{ ...vmi, uid: '' }] }, kinds, 'team'),
    {
      key: 'kubevirt.io/VirtualMachineInstance/team/vm1',
      label: 'VM team/vm1',
      namespace: 'team',
      kind: 'VirtualMachineInstance',
      name: 'vm1',
    },
    'an empty uid: keyed by group/Kind/namespace/name',
  );
  t.equal(
    sharingOwnerOf({ ownerReferences: [{ ...vmi, uid: 5 }] }, kinds, 'team')?.key,
    'kubevirt.io/VirtualMachineInstance/team/vm1',
    'a uid that is not text',
  );
  // The core group: apiVersion "v1" has no slash, its group is empty.
  t.strictSame(sharingOwnerOf({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', controller: true }] }, ['/Pod'], 'ns'), {
    key: '/Pod/ns/p',
    label: 'Pod ns/p',
    namespace: 'ns',
    kind: 'Pod',
    name: 'p',
  });
  t.equal(
    sharingOwnerOf({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', controller: true }] }, ['v1/Pod'], 'ns'),
    undefined,
    'the version is not the group',
  );
  t.strictSame(
    sharingOwnerOf(
      { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 's', uid: 'su', controller: true }] },
      ['apps/StatefulSet', ...kinds],
      'ns',
    )?.label,
    'StatefulSet ns/s',
    'only the VMI is called a VM',
  );
  t.strictSame(
    sharingOwnerOf({ ownerReferences: [{ ...vmi, apiVersion: 'other.io/v1' }] }, ['other.io/VirtualMachineInstance'], 'ns')?.label,
    'VirtualMachineInstance ns/vm1',
    'a VirtualMachineInstance of another group is not a VM',
  );
});

t.test('parseSharingOwners: group/Kind entries, deduplicated in order; a bad one is named', async (t) => {
  t.strictSame(parseSharingOwners([]), []);
  t.strictSame(
    parseSharingOwners([
      'kubevirt.io/VirtualMachineInstance',
      'apps/StatefulSet',
      'kubevirt.io/VirtualMachineInstance',
      '/P',
      'a-b.c9/K9x',
    ]),
    ['kubevirt.io/VirtualMachineInstance', 'apps/StatefulSet', '/P', 'a-b.c9/K9x'],
  );
  const input = ['apps/StatefulSet'];
  t.not(parseSharingOwners(input), input, 'a new list');
  for (const bad of [
    '',
    'VirtualMachineInstance',
    'apps/',
    'Apps/StatefulSet',
    'apps/statefulSet',
    'apps/9Set',
    'apps/Stateful-Set',
    'apps/Stateful Set',
    'apps_x/Set',
    'apps/Set/x',
    ' apps/Set',
    'apps/Set ',
    'x apps/Set',
    'apps/Set x',
  ]) {
    t.throws(
      () => parseSharingOwners(['apps/StatefulSet', bad]),
      new RangeError(
        `--address-sharing-owner: invalid value ${JSON.stringify(bad)}: expected group/Kind, e.g. kubevirt.io/VirtualMachineInstance`,
      ),
      JSON.stringify(bad),
    );
  }
});
