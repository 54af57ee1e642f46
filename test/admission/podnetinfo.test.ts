// addPodNetInfo (`--podnetinfo`): network-resources-injector's Downward API volume, `labels` and
// `annotations` files, mounted read-only in every container; with hugepages, its files too. The
// expected values are written from the rules in podnetinfo.ts and docs/migrating-from-nri.md.
import t from 'tap';
import { addPodNetInfo } from '../../src/admission/podnetinfo.js';
import { PodDraft } from '../../src/admission/draft.js';
import type { AdmissionConfig } from '../../src/admission/index.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Cfg = AdmissionConfig['podNetInfo'];

const CFG: Cfg = { enabled: true, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo' };
const HP: Cfg = { ...CFG, hugepages: true };
const LABELS = { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } };
const ANNOTATIONS = { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } };
const OURS = { name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS] } };
const MOUNT = { name: 'podnetinfo', mountPath: '/etc/podnetinfo', readOnly: true };
const file = (path: string, containerName: string, resource: string, divisor = '1Mi') => ({
  path,
  resourceFieldRef: { containerName, resource, divisor },
});
const REQ = file('hugepages_1G_request_dpdk', 'dpdk', 'requests.hugepages-1Gi');
const LIM = file('hugepages_1G_limit_dpdk', 'dpdk', 'limits.hugepages-1Gi');
const ENV = [{ name: 'CONTAINER_NAME', value: 'dpdk' }];
const dpdk = (extra: Obj = {}) => ({
  name: 'dpdk',
  resources: { requests: { 'hugepages-1Gi': '1Gi' }, limits: { 'hugepages-1Gi': '1Gi' } },
  ...extra,
});

interface Case {
  name: string;
  pod: Obj;
  cfg?: Cfg;
  /** The pod after the call; the same as `pod` when omitted. */
  out?: Obj;
  warnings?: Array<{ path: string; text: string }>;
  /** Whether the draft was written to (defaults to `out !== undefined`). */
  changed?: boolean;
}

const cases: Case[] = [
  {
    name: 'a pod without a spec is left alone',
    pod: { metadata: { name: 'p' } },
  },
  {
    name: 'a pod without containers gets the volume and nothing else',
    pod: { spec: {} },
    out: { spec: { volumes: [OURS] } },
  },
  {
    name: 'volumes that are not a list: a warning, no volume and no mount',
    pod: { spec: { volumes: 'x', containers: [{ name: 'a' }] } },
    warnings: [{ path: 'spec.volumes', text: 'not a list: volume "podnetinfo" not added' }],
  },
  {
    name: 'volumes that are an object: the same',
    pod: { spec: { volumes: { a: 1 }, containers: [{ name: 'a' }] } },
    cfg: { ...CFG, volumeName: 'pni' },
    warnings: [{ path: 'spec.volumes', text: 'not a list: volume "pni" not added' }],
  },
  {
    name: 'a container that is no object is skipped, the others mounted',
    pod: { spec: { containers: [null, 'c', { name: 'b' }] } },
    out: { spec: { volumes: [OURS], containers: [null, 'c', { name: 'b', volumeMounts: [MOUNT] }] } },
  },
  {
    name: 'volumeMounts that are not a list: a warning, that container not mounted',
    pod: { spec: { containers: [{ name: 'a', volumeMounts: 'x' }, { name: 'b' }] } },
    cfg: { ...CFG, mountPath: '/pni' },
    out: {
      spec: {
        volumes: [OURS],
        containers: [
          { name: 'a', volumeMounts: 'x' },
          { name: 'b', volumeMounts: [{ ...MOUNT, mountPath: '/pni' }] },
        ],
      },
    },
    warnings: [{ path: 'spec.containers[0].volumeMounts', text: 'not a list: /pni not mounted' }],
  },
  {
    name: 'a mount of that name elsewhere clashes',
    pod: {
      spec: {
        volumes: [OURS],
        containers: [
          {
            name: 'a',
            volumeMounts: [
              { name: 'x', mountPath: '/x' },
              { name: 'podnetinfo', mountPath: '/other' },
            ],
          },
        ],
      },
    },
    warnings: [
      { path: 'spec.containers[0].volumeMounts[1]', text: 'clashes with the pod network info mount: /etc/podnetinfo not mounted' },
    ],
  },
  {
    name: 'another volume mounted at that path clashes',
    pod: { spec: { volumes: [OURS], containers: [{ name: 'a', volumeMounts: [{ name: 'mine', mountPath: '/etc/podnetinfo' }] }] } },
    warnings: [
      { path: 'spec.containers[0].volumeMounts[0]', text: 'clashes with the pod network info mount: /etc/podnetinfo not mounted' },
    ],
  },
  {
    name: 'our own mount and volume already there (a reinvocation): nothing written',
    pod: { spec: { volumes: [OURS], containers: [{ name: 'a', volumeMounts: [MOUNT] }] } },
  },
  {
    name: "a volume of our name with only the labels file is the user's",
    pod: { spec: { volumes: [{ name: 'podnetinfo', downwardAPI: { items: [LABELS] } }], containers: [{ name: 'a' }] } },
    warnings: [{ path: 'spec.volumes[0]', text: 'volume "podnetinfo" exists: pod network info not added' }],
  },
  {
    name: "a volume of our name that is no Downward API volume is the user's",
    pod: {
      spec: {
        volumes: [
          { name: 'x', emptyDir: {} },
          { name: 'podnetinfo', emptyDir: {} },
        ],
        containers: [{ name: 'a' }],
      },
    },
    warnings: [{ path: 'spec.volumes[1]', text: 'volume "podnetinfo" exists: pod network info not added' }],
  },
  {
    name: "a Downward API volume of our name whose items are not a list is the user's",
    pod: { spec: { volumes: [{ name: 'podnetinfo', downwardAPI: { items: 'x' } }], containers: [{ name: 'a' }] } },
    warnings: [{ path: 'spec.volumes[0]', text: 'volume "podnetinfo" exists: pod network info not added' }],
  },
  {
    name: 'hugepages, first pass: the files after labels and annotations, CONTAINER_NAME, the mount',
    pod: { spec: { containers: [dpdk()] } },
    cfg: HP,
    out: {
      spec: {
        volumes: [{ name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, REQ, LIM] } }],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
  },
  {
    name: 'hugepages, reinvocation with every file (the divisor respelled by the apiserver): nothing written',
    pod: {
      spec: {
        volumes: [
          {
            name: 'podnetinfo',
            downwardAPI: {
              defaultMode: 420,
              items: [LABELS, ANNOTATIONS, file(REQ.path, 'dpdk', REQ.resourceFieldRef.resource, '1M'), LIM],
            },
          },
        ],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
  },
  {
    name: 'hugepages, reinvocation with a file first in the list: it is not added again',
    pod: {
      spec: {
        volumes: [{ name: 'podnetinfo', downwardAPI: { items: [REQ, LIM, LABELS, ANNOTATIONS] } }],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
  },
  {
    name: 'hugepages, reinvocation lacking a file: only our volume gets it, the others are kept',
    pod: {
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, REQ] } },
          { name: 'b', emptyDir: {} },
        ],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
    out: {
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, REQ, LIM] } },
          { name: 'b', emptyDir: {} },
        ],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
  },
  {
    name: 'hugepages, a file of that path for another container: kept, with a warning',
    pod: {
      spec: {
        volumes: [
          {
            name: 'podnetinfo',
            downwardAPI: { items: [LABELS, ANNOTATIONS, file(REQ.path, 'other', REQ.resourceFieldRef.resource), LIM] },
          },
        ],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
    warnings: [{ path: 'spec.volumes[0].downwardAPI.items[2]', text: '"hugepages_1G_request_dpdk" exists: kept as it is' }],
  },
  {
    name: 'hugepages, a file of that path for another resource: kept, with a warning',
    pod: {
      spec: {
        volumes: [{ name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, REQ, file(LIM.path, 'dpdk', 'limits.memory')] } }],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
    warnings: [{ path: 'spec.volumes[0].downwardAPI.items[3]', text: '"hugepages_1G_limit_dpdk" exists: kept as it is' }],
  },
  {
    name: 'hugepages, a file of that path with no resourceFieldRef: kept, with a warning',
    pod: {
      spec: {
        volumes: [
          {
            name: 'podnetinfo',
            downwardAPI: { items: [LABELS, ANNOTATIONS, { path: REQ.path, fieldRef: { fieldPath: 'metadata.name' } }, LIM] },
          },
        ],
        containers: [dpdk({ env: ENV, volumeMounts: [MOUNT] })],
      },
    },
    cfg: HP,
    warnings: [{ path: 'spec.volumes[0].downwardAPI.items[2]', text: '"hugepages_1G_request_dpdk" exists: kept as it is' }],
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const before = structuredClone(c.pod);
    const draft = new PodDraft(structuredClone(c.pod));
    const warnings = addPodNetInfo(draft, c.cfg ?? CFG);
    t.same(warnings, c.warnings ?? [], 'warnings');
    t.same(draft.pod, c.out ?? before, 'pod');
    t.equal(draft.changed, c.changed ?? c.out !== undefined, 'changed');
    t.same(draft.original, before, 'the original is not modified');
  });
}

t.test('another spec path names the warnings', async (t) => {
  const draft = new PodDraft({ spec: { volumes: 'x' } });
  t.same(addPodNetInfo(draft, CFG, 'spec.template.spec'), [
    { path: 'spec.template.spec.volumes', text: 'not a list: volume "podnetinfo" not added' },
  ]);
});
