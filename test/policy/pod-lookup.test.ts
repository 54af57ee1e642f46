// Whether a claim's holder pod runs with its address, as the API server shows it (src/policy/pod-lookup.ts):
// read as the pod watch reads a pod, so the answer is the index's once the watch catches up.
import t from 'tap';
import { apiHolderLookup, podRunsWith } from '../../src/policy/pod-lookup.js';
import { KubeRequestError, type KubeTransport } from '../../src/kube/index.js';
import type { LeaseHolder } from '../../src/policy/address-leases.js';

const MAC = '02:00:00:00:00:01';
const GUID = 'c2:11:22:33:44:55:66:77';
const holder: LeaseHolder = { kind: 'Pod', namespace: 'team', name: 'web', uid: 'u1' };
const mac = { kind: 'mac' as const, value: MAC };
const podWith = (
  over: { networks?: string; defaultNetwork?: string; uid?: string; name?: string; namespace?: string; phase?: string } = {},
): unknown => ({
  metadata: {
    namespace: over.namespace ?? 'team',
    name: over.name ?? 'web',
    uid: over.uid ?? 'u1',
    annotations: {
      ...(over.networks === undefined
        ? { 'k8s.v1.cni.cncf.io/networks': JSON.stringify([{ name: 'a', mac: MAC }]) }
        : over.networks === ''
          ? {}
          : { 'k8s.v1.cni.cncf.io/networks': over.networks }),
      ...(over.defaultNetwork ? { 'v1.multus-cni.io/default-network': over.defaultNetwork } : {}),
    },
  },
  status: { phase: over.phase ?? 'Running' },
});

t.test('podRunsWith: the holder (namespace, name, uid) running with the address', async (t) => {
  const cases: Array<[string, unknown, LeaseHolder, { kind: 'mac' | 'infiniband-guid'; value: string }, boolean]> = [
    ['the pod with the MAC', podWith(), holder, mac, true],
    ['Pending (being started) still holds it', podWith({ phase: 'Pending' }), holder, mac, true],
    ['no phase yet', { ...(podWith() as object), status: {} }, holder, mac, true],
    ['no status at all (just created)', { metadata: (podWith() as { metadata: unknown }).metadata }, holder, mac, true],
    ['Succeeded: the watch drops it', podWith({ phase: 'Succeeded' }), holder, mac, false],
    ['Failed', podWith({ phase: 'Failed' }), holder, mac, false],
    ['another uid (another incarnation of the name)', podWith({ uid: 'u2' }), holder, mac, false],
    ['a holder without a uid: the name tells', podWith({ uid: 'u2' }), { kind: 'Pod', namespace: 'team', name: 'web' }, mac, true],
    ['another name', podWith({ name: 'other' }), holder, mac, false],
    ['another namespace', podWith({ namespace: 'x' }), holder, mac, false],
    ['another MAC', podWith({ networks: JSON.stringify([{ name: 'a', mac: '02:00:00:00:00:02' }]) }), holder, mac, false],
    ['no networks annotation', podWith({ networks: '' }), holder, mac, false],
    [
      'the MAC in cni-args (as admission reads it)',
      podWith({ networks: JSON.stringify([{ name: 'a', 'cni-args': { mac: MAC } }]) }),
      holder,
      mac,
      true,
    ],
    [
      'a GUID',
      podWith({ networks: JSON.stringify([{ name: 'ib', 'infiniband-guid': GUID }]) }),
      holder,
      { kind: 'infiniband-guid', value: GUID },
      true,
    ],
    ['a malformed annotation holds nothing', podWith({ networks: '[{' }), holder, mac, false],
    ['a VMI holder is not a pod', podWith(), { ...holder, kind: 'VirtualMachineInstance' }, mac, false],
    ['not an object', 'nope', holder, mac, false],
    ['null', null, holder, mac, false],
    ['no metadata', {}, holder, mac, false],
  ];
  for (const [name, obj, h, address, want] of cases) t.equal(podRunsWith(obj, h, address), want, name);
  // The default-network annotation, resolved where the watch resolves it.
  const dflt = podWith({ networks: '', defaultNetwork: JSON.stringify([{ name: 'd', mac: MAC }]) });
  t.equal(podRunsWith(dflt, holder, mac), true, 'a MAC on the default network');
});

/** A transport answering one GET. */
function transport(answer: (path: string) => unknown, paths: string[]): KubeTransport {
  return {
    getJson: async (path: string) => {
      paths.push(path);
      return answer(path);
    },
    watch: async () => undefined,
    patchJson: async () => undefined,
  };
}

t.test('apiHolderLookup: one GET of the pod; 404 false; an error or a timeout cannot tell', async (t) => {
  const signal = new AbortController().signal;
  const paths: string[] = [];
  t.equal(await apiHolderLookup(transport(() => podWith(), paths))(holder, mac, signal), true);
  t.strictSame(paths, ['/api/v1/namespaces/team/pods/web']);
  t.equal(await apiHolderLookup(transport(() => podWith({ uid: 'u9' }), paths))(holder, mac, signal), false, 'another uid');
  const notFound = (): never => {
    throw new KubeRequestError(404, 'not found');
  };
  t.equal(await apiHolderLookup(transport(notFound, paths))(holder, mac, signal), false, '404: gone or never created');
  const unavailable = (): never => {
    throw new KubeRequestError(503, 'unavailable');
  };
  t.equal(await apiHolderLookup(transport(unavailable, paths))(holder, mac, signal), undefined, '503: cannot tell');
  const slow: KubeTransport = {
    ...transport(() => podWith(), paths),
    getJson: (_p, _q, _a, sig) => new Promise((_, reject) => sig?.addEventListener('abort', () => reject(sig.reason))),
  };
  // The deadline's timer is unref'd (it must not keep serve alive): hold the process open meanwhile.
  const hold = setTimeout(() => undefined, 60_000);
  t.equal(await apiHolderLookup(slow, { timeoutMs: 20 })(holder, mac, signal), undefined, 'no answer in time: cannot tell');
  clearTimeout(hold);
  const before = paths.length;
  t.equal(
    await apiHolderLookup(transport(() => podWith(), paths))({ ...holder, kind: 'VirtualMachineInstance' }, mac, signal),
    undefined,
    'a VMI: not asked',
  );
  t.equal(paths.length, before, 'no GET for a VMI');
  await apiHolderLookup(transport(() => podWith(), paths))({ kind: 'Pod', namespace: 'a b', name: 'x/y' }, mac, signal);
  t.equal(paths.at(-1), '/api/v1/namespaces/a%20b/pods/x%2Fy', 'names encoded');
});

t.test('apiHolderLookup: 2 s to answer by default; the caller’s own abort cannot tell either', async (t) => {
  const paths: string[] = [];
  const timeouts: number[] = [];
  const real = AbortSignal.timeout.bind(AbortSignal);
  AbortSignal.timeout = (ms: number) => (timeouts.push(ms), real(ms));
  t.teardown(() => void (AbortSignal.timeout = real));
  await apiHolderLookup(transport(() => podWith(), paths))(holder, mac, new AbortController().signal);
  t.strictSame(timeouts, [2_000], 'the documented 2 s');
  await apiHolderLookup(
    transport(() => podWith(), paths),
    { timeoutMs: 750 },
  )(holder, mac, new AbortController().signal);
  t.equal(timeouts.at(-1), 750, 'or the one given');
  const caller = new AbortController();
  const slow: KubeTransport = {
    ...transport(() => podWith(), paths),
    getJson: (_p, _q, _a, sig) => new Promise((_, reject) => sig?.addEventListener('abort', () => reject(sig.reason))),
  };
  const pending = apiHolderLookup(slow)(holder, mac, caller.signal);
  caller.abort(new Error('request ended'));
  t.equal(await pending, undefined, 'aborted by the caller: cannot tell');
});
