// The oracle's comparison (cni/model.ts), without plugins: which verdict against which execution
// is a false denial, a missed failure, a silent drop or agreement.
import t from 'tap';
import { applied, canonicalIp, compare, NETWORKS_PATH, requestedOf, type Execution, type Selection, type Verdict } from './model.js';
import { pendingClassOf } from './pending.js';

const admitted: Verdict = { allowed: true, errors: [], warnings: [] };
const denied: Verdict = { allowed: false, errors: ['x: Invalid value'], warnings: [] };
const warned = (i: number): Verdict => ({ allowed: true, errors: [], warnings: [`${NETWORKS_PATH}[${i}].mac: something`] });
const iface = (mac: string, ...addresses: string[]) => ({ ifName: 'net1', mac, addresses, routes: [] });
const ok = (...interfaces: Execution['interfaces']): Execution => ({ added: true, interfaces, delErrors: [] });
const failed: Execution = { added: false, failedAt: 0, error: 'boom', interfaces: [], delErrors: [] };

const sel: Selection[] = [{ name: 'n', mac: '02-00-00-00-00-01', ips: ['10.0.0.5/24'] }];
const cases: Array<[string, Verdict, Execution, string | undefined]> = [
  ['admitted, applied', admitted, ok(iface('02:00:00:00:00:01', '10.0.0.5/24')), undefined],
  ['denied, applied: false denial', denied, ok(iface('02:00:00:00:00:01', '10.0.0.5/24')), 'false-denial'],
  ['denied, ADD failed', denied, failed, undefined],
  ['denied, MAC dropped', denied, ok(iface('0a:00:00:00:00:09', '10.0.0.5/24')), undefined],
  ['admitted, ADD failed: missed failure', admitted, failed, 'missed-failure'],
  ['warned, ADD failed: still a missed failure', warned(0), failed, 'missed-failure'],
  ['admitted, MAC dropped: silent drop', admitted, ok(iface('0a:00:00:00:00:09', '10.0.0.5/24')), 'silent-drop'],
  ['warned on the selection, MAC dropped', warned(0), ok(iface('0a:00:00:00:00:09', '10.0.0.5/24')), undefined],
  ['warned on another selection, MAC dropped', warned(1), ok(iface('0a:00:00:00:00:09', '10.0.0.5/24')), 'silent-drop'],
  ['admitted, IP dropped', admitted, ok(iface('02:00:00:00:00:01', '10.0.0.6/24')), 'silent-drop'],
];
for (const [name, v, run, want] of cases) t.equal(compare(sel, v, run).mismatch, want, name);

t.test('what a selection requests, cni-args keys case-insensitively', async (t) => {
  t.same(
    requestedOf([{ name: 'n', mac: 'm1', 'cni-args': { MAC: 'm2', Ips: ['1.2.3.4'], other: 'x' } }]).map((r) => `${r.key}=${r.value}`),
    ['mac=m1', 'cni-args.mac=m2', 'cni-args.ips=1.2.3.4'],
  );
});

t.test('addresses compare without prefix, IPv6 in one form; MACs in any Go form', async (t) => {
  t.equal(canonicalIp('fd00:0:0::0005/64'), 'fd00::5');
  t.equal(canonicalIp('10.0.0.5'), '10.0.0.5');
  t.equal(canonicalIp('nope'), undefined);
  t.ok(applied({ selection: 0, key: 'ips', value: 'fd00::5' }, iface('x', 'fd00:0::5/64')));
  t.ok(applied({ selection: 0, key: 'mac', value: '0200.0000.0001' }, iface('02:00:00:00:00:01')));
  t.notOk(applied({ selection: 0, key: 'mac', value: '02:00:00:00:00:01' }, undefined));
});

t.test('generated mismatches fall in the pending classes by what happened', async (t) => {
  const failedWith = (error: string): Execution => ({ ...failed, error });
  const miss = { mismatch: 'missed-failure' as const, dropped: [], summary: '' };
  t.equal(
    pendingClassOf({ name: 'n', mac: '01:00:5e:00:00:01' }, failedWith('failed to make veth pair: cannot assign requested address'), miss),
    'mac-kernel-refuses',
  );
  t.equal(
    pendingClassOf({ name: 'n', ips: ['10.12.0.1'] }, failedWith("requested ip 10.12.0.1 is subnet's gateway"), miss),
    'host-local-reserved',
  );
  t.equal(
    pendingClassOf(
      { name: 'n', 'cni-args': { ips: ['10.1.0.5', '10.1.0.6'] } },
      failedWith('failed to allocate all requested IPs: 10.1.0.5'),
      miss,
    ),
    'host-local-one-per-range',
  );
  t.equal(
    pendingClassOf({ name: 'n', ips: ['10.1.0.5'] }, failedWith('some other failure'), miss),
    undefined,
    'anything else is a finding',
  );
});
