// addedDevices (src/admission/hotplug.ts): a running pod's networks annotation changed (KubeVirt
// NIC hotplug); a network added whose NAD needs a device beyond what the containers request is
// forbidden, since a running pod's resources cannot grow.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { addedDevices } from '../../src/admission/hotplug.js';
import { nadLookup, nadObject } from './fixtures.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SRIOV = 'intel.com/sriov_a';
const nads = nadLookup(nadObject('sriov-a', { resourceName: SRIOV }), nadObject('sriov-b', { resourceName: SRIOV }), nadObject('plain'));
const nets = (value: string) => parseNetworks(value, { namespace: 'default' }).networks;
const requesting = (n: number): Obj => ({
  spec: { containers: [{ name: 'a', resources: { requests: { [SRIOV]: String(n) }, limits: { [SRIOV]: String(n) } } }] },
});

interface Case {
  name: string;
  before: string;
  after: string;
  pod: Obj;
  /** Index, in `after`, of the element named by the one error; undefined for none. */
  error?: number;
  requested?: number;
}

const cases: Case[] = [
  { name: 'a device network added to a pod that requests none', before: '', after: 'sriov-a', pod: requesting(0), error: 0, requested: 0 },
  { name: 'a device network added to a pod without spec', before: '', after: 'sriov-a', pod: {}, error: 0, requested: 0 },
  {
    name: 'a device network added to a pod whose containers are not an array',
    before: '',
    after: 'sriov-a',
    pod: { spec: { containers: 'x' } },
    error: 0,
    requested: 0,
  },
  {
    name: 'non-object containers are skipped',
    before: '',
    after: 'sriov-a',
    pod: { spec: { containers: [null, 'x', requesting(1).spec.containers[0]] } },
  },
  { name: 'unchanged device networks, even beyond the request, pass', before: 'sriov-a', after: 'sriov-a', pod: requesting(0) },
  { name: 'as many users as before, in another network, pass', before: 'sriov-a', after: 'sriov-b', pod: requesting(0) },
  { name: 'one more user than the request', before: 'sriov-a', after: 'sriov-a,sriov-b', pod: requesting(1), error: 1, requested: 1 },
  { name: 'within the request', before: 'sriov-a', after: 'sriov-a,sriov-b', pod: requesting(2) },
  {
    name: 'the added repeat of a network is named, not the ones before it',
    before: 'sriov-a,sriov-a',
    after: 'sriov-a,sriov-a,sriov-a',
    pod: requesting(2),
    error: 2,
    requested: 2,
  },
  { name: 'a network without devices', before: '', after: 'plain', pod: requesting(0) },
];

t.test('addedDevices', async (t) => {
  for (const c of cases) {
    const after = nets(c.after);
    const errors = addedDevices(nets(c.before), after, c.pod, nads);
    if (c.error === undefined) {
      t.strictSame(errors, [], c.name);
      continue;
    }
    const n = after[c.error]!;
    const ref = `${n.selection.namespace}/${n.selection.name}`;
    t.strictSame(
      errors.map((e) => [e.path, e.type, e.reason]),
      [
        [
          n.path,
          'Forbidden',
          `${ref} needs device resource "${SRIOV}" (${after.length} for the pod's networks; its containers request ${c.requested}), and a running pod's resources cannot grow: create the pod anew with this network (KubeVirt migrates the VM)`,
        ],
      ],
      c.name,
    );
  }
});
