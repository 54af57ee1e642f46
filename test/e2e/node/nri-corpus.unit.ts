// Unit checks of nri-corpus.ts without a node: the netprobe log parser, the attribution of
// Allocate records to containers, the device views and their comparison against the real
// docs/nri-differences.json, and runNriCorpus with a fake NRI starter and a fake `create`.
import t from 'tap';
import {
  attributeRecords,
  compareViews,
  deviceView,
  parseNetprobeLog,
  runNriCorpus,
  type AllocateRecord,
  type CreateResult,
  type Webhook,
} from './nri-corpus.js';
import { loadDifferences } from '../lib/nri-differences.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const table = loadDifferences();
const SRIOV = 'intel.com/sriov_netdevice';
const RDMA = 'rdma/hca_shared_devices_a';
const rec = (resource: string, devices: string[], env: Record<string, string>): AllocateRecord => ({
  resource,
  devices,
  env,
  time: '2026-12-02T10:00:00Z',
});
const twoContainers: Obj = { spec: { containers: [{ name: 'sidecar' }, { name: 'app' }] } };

t.test('parseNetprobeLog reads env lines, files and the ready mark', async (t) => {
  const log = [
    'env: A=1',
    'env: PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE=0000:3b:02.0,0000:3b:02.1',
    'env: X=a=b',
    'missing: /nope: lstat /nope: no such file or directory',
    'file: /etc/podnetinfo/annotations',
    'k8s.v1.cni.cncf.io/networks="sriov-a"',
    'file: /etc/podnetinfo/hugepages_request',
    '2',
    'netprobe: ready',
    '',
  ].join('\n');
  const p = parseNetprobeLog(log);
  t.same(p.env, { A: '1', PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE: '0000:3b:02.0,0000:3b:02.1', X: 'a=b' });
  t.same(p.files, { '/etc/podnetinfo/annotations': 'k8s.v1.cni.cncf.io/networks="sriov-a"\n', '/etc/podnetinfo/hugepages_request': '2\n' });
  t.equal(p.ready, true);
  t.equal(parseNetprobeLog('env: A=1\n').ready, false, 'a log cut short is not ready');
  // A file whose content looks like an env line stays content.
  t.same(parseNetprobeLog('file: /f\nenv: NOT=env\nnetprobe: ready\n').env, {});
});

t.test('attributeRecords puts each record in the one container that shows its env', async (t) => {
  const records = [
    rec(SRIOV, ['0000:3b:02.0'], { PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE: '0000:3b:02.0' }),
    rec(RDMA, ['0000:3c:02.0'], { PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A: '0000:3c:02.0' }),
    rec(SRIOV, ['0000:3b:02.2'], { PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE: '0000:3b:02.2' }),
  ];
  const r = attributeRecords(records, {
    app: { PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE: '0000:3b:02.0', PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A: '0000:3c:02.0' },
    sidecar: { HOME: '/' },
  });
  t.same(
    r.allocations.map((a) => [a.container, a.record.resource]),
    [
      ['app', SRIOV],
      ['app', RDMA],
    ],
  );
  t.same(r.errors, [`${SRIOV} 0000:3b:02.2: in no container`]);
  const twice = attributeRecords([records[0]!], { a: records[0]!.env, b: records[0]!.env });
  t.same(twice.errors, [`${SRIOV} 0000:3b:02.0: in a and b`]);
});

t.test("deviceView counts devices per container and resource, in the pod's container order", async (t) => {
  const r: CreateResult = {
    outcome: 'running',
    allocations: [
      { container: 'app', record: rec(SRIOV, ['0000:3b:02.0', '0000:3b:02.1'], {}) },
      { container: 'app', record: rec(RDMA, ['0000:3c:02.0'], {}) },
    ],
  };
  t.same(deviceView(twoContainers, r), {
    outcome: 'running',
    pod: {
      spec: {
        containers: [
          { name: 'sidecar', resources: { requests: {} } },
          { name: 'app', resources: { requests: { [SRIOV]: 2, [RDMA]: 1 } } },
        ],
      },
    },
  });
  t.same(deviceView(twoContainers, { outcome: 'refused', allocations: [] }), { outcome: 'refused' });
});

t.test('compareViews excuses exactly the listed differences of docs/nri-differences.json', async (t) => {
  const inFirst: CreateResult = { outcome: 'running', allocations: [{ container: 'sidecar', record: rec(SRIOV, ['0000:3b:02.0'], {}) }] };
  const inApp: CreateResult = { outcome: 'running', allocations: [{ container: 'app', record: rec(SRIOV, ['0000:3b:02.1'], {}) }] };
  const nriView = deviceView(twoContainers, inFirst);
  const naView = deviceView(twoContainers, inApp);
  const excused = compareViews(nriView, naView, ['default-container'], table);
  t.equal(excused.deltas.length, 2, 'one device moved: removed from one container, added to another');
  t.same(excused.unexplained, []);
  t.same(excused.unused, []);
  const notListed = compareViews(nriView, naView, [], table);
  t.same(notListed.unexplained.map((d) => d.path).sort(), [
    `/pod/spec/containers/0/resources/requests/intel.com~1sriov_netdevice`,
    `/pod/spec/containers/1/resources/requests/intel.com~1sriov_netdevice`,
  ]);
  const same = compareViews(naView, naView, ['raise-user-value'], table);
  t.same([same.deltas, same.unused], [[], ['raise-user-value']], 'a listed difference that does not show is reported');
  const refused = compareViews({ outcome: 'refused' }, naView, ['comma-resource-name'], table);
  t.same([refused.unexplained, refused.unused], [[], []], 'NRI refused, netattach ran: the comma-resource-name entry');
  const fewer = compareViews(
    deviceView(twoContainers, inApp),
    deviceView(twoContainers, {
      outcome: 'running',
      allocations: [{ container: 'app', record: rec(SRIOV, ['0000:3b:02.0', '0000:3b:02.1'], {}) }],
    }),
    ['raise-user-value'],
    table,
  );
  t.same([fewer.deltas.length, fewer.unexplained, fewer.unused], [1, [], []], 'a count raised: raise-user-value');
  t.throws(() => compareViews(nriView, naView, ['no-such-entry'], table), /not in nri-differences\.json: no-such-entry/);
});

t.test('runNriCorpus runs each pod through NRI then netattach, stops NRI, and reports per pod', async (t) => {
  const calls: string[] = [];
  let stopped = 0;
  const pods = [
    { name: 'simple', pod: { metadata: { name: 'simple' }, spec: { containers: [{ name: 'app' }] } } },
    { name: 'default-container', pod: { metadata: { name: 'dc' }, ...twoContainers }, differences: ['default-container'] },
  ];
  const create = async (w: Webhook, pod: Obj): Promise<CreateResult> => {
    calls.push(`${w.name}@${w.url}:${pod.metadata.name}`);
    pod.metadata.name = 'mutated'; // the corpus pod itself must not change
    const container = w.name === 'nri' || pod.spec.containers.length === 1 ? pod.spec.containers[0].name : 'app';
    return { outcome: 'running', allocations: [{ container, record: rec(SRIOV, ['0000:3b:02.0'], {}) }] };
  };
  const results = await runNriCorpus({
    nriBin: '/nri/webhook',
    nri: {} as never,
    netattachUrl: 'https://127.0.0.1:2',
    pods,
    create,
    table,
    startNri: async (o) => {
      t.equal(o.bin, '/nri/webhook');
      return { url: 'https://127.0.0.1:1', stop: async () => void stopped++ };
    },
  });
  t.same(calls, [
    'nri@https://127.0.0.1:1:simple',
    'netattach@https://127.0.0.1:2:simple',
    'nri@https://127.0.0.1:1:dc',
    'netattach@https://127.0.0.1:2:dc',
  ]);
  t.equal(stopped, 1);
  t.same(
    results.map((r) => [r.name, r.deltas.length, r.unexplained, r.unused]),
    [
      ['simple', 0, [], []],
      ['default-container', 2, [], []],
    ],
  );
  t.equal(pods[0]!.pod.metadata.name, 'simple');

  // NRI is stopped when `create` fails, and an unknown difference id fails before NRI starts.
  stopped = 0;
  await t.rejects(
    runNriCorpus({
      nriBin: 'x',
      nri: {} as never,
      netattachUrl: '',
      pods,
      table,
      create: async () => {
        throw new Error('boom');
      },
      startNri: async () => ({ url: '', stop: async () => void stopped++ }),
    }),
    /boom/,
  );
  t.equal(stopped, 1);
  let started = false;
  await t.rejects(
    runNriCorpus({
      nriBin: 'x',
      nri: {} as never,
      netattachUrl: '',
      pods: [{ name: 'p', pod: {}, differences: ['nope'] }],
      table,
      create,
      startNri: async () => {
        started = true;
        return { url: '', stop: async () => {} };
      },
    }),
    /p: not in docs\/nri-differences\.json: nope/,
  );
  t.equal(started, false);
});
