/**
 * End-to-end DRA: netattach behind a real kube-apiserver with a real kube-scheduler and the
 * kube-controller-manager's resourceclaim controller (Kubernetes >= 1.37, see docs/e2e.md).
 * The test is the node and the network DRA driver: it creates a Node and publishes a
 * ResourceSlice whose devices carry k8s.cni.cncf.io/resourceName and k8s.cni.cncf.io/deviceID,
 * the attributes Multus matches against a NAD's resourceName. Pods created through netattach must
 * end up bound to the node with allocated claims whose devices have the NAD's resourceName.
 *
 *   npm run test:e2e            (builds, then runs this with tap; see docs/e2e.md)
 */
import t from 'tap';
import { eventually, startE2e, type E2e } from './lib/env.js';
import { NETWORKS, RESOURCE_NAME, macvlanConfig, namespace, nad, podSpec } from './lib/objects.js';

type Obj = Record<string, unknown>;
interface ClaimStatus {
  allocation?: { devices?: { results?: Array<{ request: string; driver: string; pool: string; device: string }> } };
}
interface PodJson {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    nodeName?: string;
    resourceClaims?: Array<{ name: string; resourceClaimTemplateName?: string; resourceClaimName?: string }>;
    containers: Array<{
      resources?: { requests?: Record<string, string>; limits?: Record<string, string>; claims?: Array<{ name: string }> };
    }>;
  };
  status?: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    resourceClaimStatuses?: Array<{ name: string; resourceClaimName?: string }>;
    extendedResourceClaimStatus?: {
      resourceClaimName: string;
      requestMappings: Array<{ containerName: string; resourceName: string; requestName: string }>;
    };
  };
}

const NS = 'dra';
const NODE = 'dra-node-1';
const DRIVER = 'net.dra.example.com';
const CLAIMED = 'example.com/net_claimed'; // served through explicit claims (template)
const EXTENDED = 'example.com/net_extended'; // served as an extended resource by a DeviceClass
// Multus's DRA how-to (issue 38): a second driver publishing only network devices on NODE, a NAD
// with the resourceName alone, and pods bringing their own claims. NODE advertises no extended
// resource: no device plugin, DRA only.
const MULTUS_DRIVER = 'sriov.multus.example.com';
const MULTUS = 'example.com/net_multus';
// A second node with a device plugin (intel.com/sriov_vf in its allocatable) and a GPU DRA driver:
// the pod with a GPU claim unrelated to its SR-IOV network must keep its injected VF.
const DP_NODE = 'dp-node-1';
const GPU_DRIVER = 'gpu.example.com';
const SRIOV_VF = 'intel.com/sriov_vf';
const DENIED_POD = /admission webhook "pods(\.mutate)?\.netattach\.io" denied the request/;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let e: E2e;

t.before(async () => {
  const t0 = Date.now();
  e = await startE2e((m) => t.comment(m), { scheduling: true, featureGates: 'DRAExtendedResource=true' });
  t.comment(`cluster with scheduler and controller-manager, netattach and webhooks up in ${Date.now() - t0} ms`);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
});

// Scheduling and claim allocation take a few seconds on an idle machine; a loaded one gets room.
const SCHEDULED_MS = 120_000;

const getPod = (name: string): Promise<PodJson> => e.getJson<PodJson>(['pod', '-n', NS, name]);

/** The devices of a ResourceSlice, by name, with their attributes as plain strings. */
const sliceDevices = new Map<string, Record<string, string>>();

function device(name: string, resourceName: string | undefined, pcieRoot: string, extra: Record<string, string> = {}): Obj {
  const attributes: Record<string, { string: string }> = { 'resource.kubernetes.io/pcieRoot': { string: pcieRoot } };
  if (resourceName) {
    attributes['k8s.cni.cncf.io/resourceName'] = { string: resourceName };
    attributes['k8s.cni.cncf.io/deviceID'] = { string: extra.deviceID ?? '' };
  } else attributes[`${DRIVER}/kind`] = { string: 'gpu' };
  sliceDevices.set(name, Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, v.string])));
  return { name, attributes };
}

// `in` first: reading an attribute a device lacks is a CEL error, not false.
const byResourceName = (resourceName: string): Obj => ({
  cel: {
    expression: `device.driver == "${DRIVER}" && "resourceName" in device.attributes["k8s.cni.cncf.io"] && device.attributes["k8s.cni.cncf.io"].resourceName == "${resourceName}"`,
  },
});

function podOf(
  name: string,
  networks: string,
  extra: { annotations?: Record<string, string>; resourceClaims?: Obj[]; claims?: Obj[]; amounts?: Record<string, string> } = {},
): Obj {
  const spec = podSpec() as { containers: Obj[] } & Obj;
  if (extra.resourceClaims) spec['resourceClaims'] = extra.resourceClaims;
  if (extra.claims) spec.containers[0]!['resources'] = { claims: extra.claims };
  if (extra.amounts)
    spec.containers[0]!['resources'] = {
      ...(spec.containers[0]!['resources'] as Obj | undefined),
      requests: extra.amounts,
      limits: extra.amounts,
    };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, annotations: { [NETWORKS]: networks, ...extra.annotations } },
    spec,
  };
}

/** Waits for the pod to be bound and returns the devices allocated to each of its claims. */
async function boundDevices(
  name: string,
  node = NODE,
): Promise<{ pod: PodJson; devices: Array<{ claim: string; device: string; attributes: Record<string, string> }> }> {
  const pod = await eventually(
    `pod ${name} bound to ${node}`,
    async () => {
      const p = await getPod(name);
      return p.spec.nodeName ? p : undefined;
    },
    SCHEDULED_MS,
  );
  const claimNames = [
    ...(pod.status?.resourceClaimStatuses ?? []).map((s) => s.resourceClaimName).filter((n): n is string => !!n),
    ...(pod.spec.resourceClaims ?? []).map((c) => c.resourceClaimName).filter((n): n is string => !!n),
    ...(pod.status?.extendedResourceClaimStatus ? [pod.status.extendedResourceClaimStatus.resourceClaimName] : []),
  ];
  const devices: Array<{ claim: string; device: string; attributes: Record<string, string> }> = [];
  for (const claim of claimNames) {
    const c = await eventually(
      `claim ${claim} allocated`,
      async () => {
        const got = await e.getJson<{ status?: ClaimStatus }>(['resourceclaim', '-n', NS, claim]);
        return got.status?.allocation ? got : undefined;
      },
      SCHEDULED_MS,
    );
    for (const r of c.status!.allocation!.devices?.results ?? []) {
      devices.push({ claim, device: r.device, attributes: sliceDevices.get(r.device) ?? {} });
    }
  }
  return { pod, devices };
}

t.test('the node, the network DRA driver, classes, templates and NADs', async (t) => {
  // The node, as a kubelet would register it (no kubelet runs: pods are bound, never started).
  await e.applyOk({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } });
  const status = {
    status: {
      capacity: { cpu: '8', memory: '16Gi', pods: '110' },
      allocatable: { cpu: '8', memory: '16Gi', pods: '110' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'e2e',
          lastHeartbeatTime: new Date().toISOString(),
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
  };
  await e.cluster.kubectlOk(['patch', 'node', NODE, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
  // The apiserver's TaintNodesByCondition admission taints a new node not-ready; the node
  // lifecycle controller (not run here) would lift it once the kubelet reports Ready.
  await e.cluster.kubectlOk(['taint', 'node', NODE, 'node.kubernetes.io/not-ready:NoSchedule-']);

  // The driver's ResourceSlice: six VFs of the claimed network, two of the extended one, one GPU
  // on the PCIe root of VF 0 only (the own-claim case runs first, so VF 0 is free then).
  const devices = [
    device('vf-claimed-0', CLAIMED, 'pci0000:00', { deviceID: '0000:3b:02.0' }),
    ...[1, 2, 3, 4, 5].map((i) => device(`vf-claimed-${i}`, CLAIMED, 'pci0000:80', { deviceID: `0000:3b:02.${i}` })),
    device('vf-extended-0', EXTENDED, 'pci0000:80', { deviceID: '0000:5e:02.0' }),
    device('vf-extended-1', EXTENDED, 'pci0000:80', { deviceID: '0000:5e:02.1' }),
    device('gpu-0', undefined, 'pci0000:00'),
  ];
  await e.applyOk([
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: `${NODE}-${DRIVER}` },
      spec: { driver: DRIVER, nodeName: NODE, pool: { name: NODE, generation: 1, resourceSliceCount: 1 }, devices },
    },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'net-claimed' },
      spec: { selectors: [byResourceName(CLAIMED)] },
    },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'net-extended' },
      spec: { selectors: [byResourceName(EXTENDED)], extendedResourceName: EXTENDED },
    },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'gpu' },
      spec: {
        selectors: [
          {
            cel: {
              expression: `device.driver == "${DRIVER}" && "kind" in device.attributes["${DRIVER}"] && device.attributes["${DRIVER}"].kind == "gpu"`,
            },
          },
        ],
      },
    },
    namespace(NS),
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'net-claimed', namespace: NS },
      spec: { spec: { devices: { requests: [{ name: 'nic', exactly: { deviceClassName: 'net-claimed' } }] } } },
    },
    // A GPU and a NIC on one PCIe root: the pod's own claim for the network (docs/dra.md).
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'gpu-and-nic', namespace: NS },
      spec: {
        spec: {
          devices: {
            requests: [
              { name: 'gpu', exactly: { deviceClassName: 'gpu' } },
              { name: 'nic', exactly: { deviceClassName: 'net-claimed' } },
            ],
            constraints: [{ requests: ['gpu', 'nic'], matchAttribute: 'resource.kubernetes.io/pcieRoot' }],
          },
        },
      },
    },
  ]);
  const claimedNad = nad({ namespace: NS, name: 'claimed', config: macvlanConfig('claimed') }) as {
    metadata: { annotations: Record<string, string> };
  };
  claimedNad.metadata.annotations = { [RESOURCE_NAME]: CLAIMED, 'netattach.io/resourceClaimTemplate': 'net-claimed' };
  const extendedNad = nad({ namespace: NS, name: 'extended', config: macvlanConfig('extended') }) as {
    metadata: { annotations: Record<string, string> };
  };
  extendedNad.metadata.annotations = { [RESOURCE_NAME]: EXTENDED };
  await e.applyOk([claimedNad as Obj, extendedNad as Obj]);
  // netattach sees the template before the pods come (its watch; a miss would be a GET anyway).
  await sleep(1000);
  t.pass('node, ResourceSlice, DeviceClasses, templates and NADs created');
});

/** A Node as a kubelet registers it, Ready, untainted, with `extra` in capacity and allocatable. */
async function addNode(name: string, extra: Record<string, string> = {}): Promise<void> {
  await e.applyOk({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  const amounts = { cpu: '8', memory: '16Gi', pods: '110', ...extra };
  const now = new Date().toISOString();
  const status = {
    status: {
      capacity: amounts,
      allocatable: amounts,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
    },
  };
  await e.cluster.kubectlOk(['patch', 'node', name, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
  await e.cluster.kubectlOk(['taint', 'node', name, 'node.kubernetes.io/not-ready:NoSchedule-']);
}

t.test("Multus's DRA how-to: a DRA-only driver on NODE, a device-plugin node, their classes and NADs", async (t) => {
  // Multus's how-to (https://github.com/k8snetworkplumbingwg/multus-cni, docs/how-to-use.md, "Run pod
  // with network annotation and Dynamic Resource Allocation driver", and e2e/templates/dra-integration.yml.j2):
  // a NAD with k8s.v1.cni.cncf.io/resourceName only; the pod names it in k8s.v1.cni.cncf.io/networks
  // and declares its own spec.resourceClaims from a template, referenced by the container's
  // resources.claims; the class names the driver. Written here in resource.k8s.io/v1.
  const multusDevices = [0, 1, 2].map((i) => device(`vf-multus-${i}`, MULTUS, 'pci0000:80', { deviceID: `0000:af:02.${i}` }));
  const template = (name: string, deviceClassName: string): Obj => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: { name, namespace: NS },
    spec: { spec: { devices: { requests: [{ name: 'vf', exactly: { deviceClassName } }] } } },
  });
  await addNode(DP_NODE, { [SRIOV_VF]: '4' });
  sliceDevices.set('gpu-dp-0', {});
  await e.applyOk([
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: `${NODE}-${MULTUS_DRIVER}` },
      spec: { driver: MULTUS_DRIVER, nodeName: NODE, pool: { name: NODE, generation: 1, resourceSliceCount: 1 }, devices: multusDevices },
    },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: `${DP_NODE}-${GPU_DRIVER}` },
      spec: {
        driver: GPU_DRIVER,
        nodeName: DP_NODE,
        pool: { name: DP_NODE, generation: 1, resourceSliceCount: 1 },
        devices: [{ name: 'gpu-dp-0', attributes: {} }],
      },
    },
    // The how-to's class: the driver alone (netattach cannot tell which resourceName it gives).
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'multus-by-driver' },
      spec: { selectors: [{ cel: { expression: `device.driver == "${MULTUS_DRIVER}"` } }] },
    },
    // The same narrowed to the attribute Multus matches (netattach is certain).
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'multus-by-attribute' },
      spec: {
        selectors: [
          {
            cel: { expression: `device.driver == "${MULTUS_DRIVER}" && device.attributes["k8s.cni.cncf.io"].resourceName == "${MULTUS}"` },
          },
        ],
      },
    },
    // A GPU class as GPU drivers ship them: by driver.
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'dp-gpu' },
      spec: { selectors: [{ cel: { expression: `device.driver == "${GPU_DRIVER}"` } }] },
    },
  ]);
  const multusNad = nad({ namespace: NS, name: 'multus', config: macvlanConfig('multus') }) as {
    metadata: { annotations: Record<string, string> };
  };
  multusNad.metadata.annotations = { [RESOURCE_NAME]: MULTUS };
  const sriovNad = nad({ namespace: NS, name: 'sriov-dp', config: macvlanConfig('sriov-dp') }) as {
    metadata: { annotations: Record<string, string> };
  };
  sriovNad.metadata.annotations = { [RESOURCE_NAME]: SRIOV_VF };
  await e.applyOk([
    multusNad as Obj,
    sriovNad as Obj,
    template('multus-by-attribute', 'multus-by-attribute'),
    template('multus-by-driver', 'multus-by-driver'),
    template('dp-gpu', 'dp-gpu'),
  ]);
  await sleep(1000);
  t.pass('DRA-only driver on NODE, device-plugin node, classes, templates, NADs');
});

/** Waits for the scheduler to say why the pod cannot be placed (PodScheduled False). */
async function unschedulable(name: string): Promise<{ reason?: string; message?: string }> {
  return eventually(
    `pod ${name} judged unschedulable`,
    async () => {
      const c = (await getPod(name)).status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
      return c?.message ? c : undefined;
    },
    SCHEDULED_MS,
  );
}

const howToPod = (
  name: string,
  template: string,
  extra: { annotations?: Record<string, string>; amounts?: Record<string, string> } = {},
): Obj =>
  podOf(name, 'multus', { resourceClaims: [{ name: 'vf', resourceClaimTemplateName: template }], claims: [{ name: 'vf' }], ...extra });

t.test("Multus's how-to pod, class selecting the attribute: no extended resource, bound on the DRA-only node", async (t) => {
  const r = await e.apply(howToPod('multus-attribute', 'multus-by-attribute'));
  t.equal(r.code, 0, `admitted\n${r.stderr}`);
  t.notMatch(r.stderr, /Warning:/, 'nothing to say: the claim certainly serves the network');
  const { pod, devices } = await boundDevices('multus-attribute');
  t.same(pod.spec.resourceClaims, [{ name: 'vf', resourceClaimTemplateName: 'multus-by-attribute' }], 'only the claim the pod brought');
  t.notOk(pod.spec.containers[0]!.resources?.requests?.[MULTUS], 'no extended resource requested');
  t.notOk(pod.spec.containers[0]!.resources?.limits?.[MULTUS], 'nor limited');
  t.equal(pod.spec.nodeName, NODE, 'bound to the DRA-only node');
  t.equal(devices.length, 1, 'one device');
  t.equal(devices[0]!.attributes['k8s.cni.cncf.io/resourceName'], MULTUS, "its resourceName is the NAD's: what Multus matches");
});

t.test('before issue 38: the same pod with the extended resource injected stays Pending', async (t) => {
  // What netattach on main made of it: example.com/net_multus: 1 added, which no node advertises.
  await e.applyOk(howToPod('multus-injected', 'multus-by-attribute', { amounts: { [MULTUS]: '1' } }));
  const c = await unschedulable('multus-injected');
  t.equal(c.reason, 'Unschedulable');
  t.match(c.message, /Insufficient example\.com\/net_multus/, "the scheduler's reason: no node has the extended resource");
  t.notOk((await getPod('multus-injected')).spec.nodeName, 'not bound');
});

t.test("Multus's how-to pod, class by driver alone: injected and warned; the warning's opt-out places it", async (t) => {
  const r = await e.apply(howToPod('multus-driver', 'multus-by-driver'));
  t.equal(r.code, 0, `admitted\n${r.stderr}`);
  t.match(
    r.stderr,
    /Warning: dra\/multus: example\.com\/net_multus added; pod claim vf may hold its device instead \(no request of ResourceClaimTemplate multus-by-driver names a DeviceClass known to select it\): if so, annotate netattach\.io\/networkClaims: multus=vf/,
    'netattach says what it did, why it could not tell, and the opt-out',
  );
  const c = await unschedulable('multus-driver');
  t.match(c.message, /Insufficient example\.com\/net_multus/, 'Pending on this DRA-only cluster, as the warning said it might');
  const opt = await e.apply(
    howToPod('multus-driver-opt', 'multus-by-driver', { annotations: { 'netattach.io/networkClaims': 'multus=vf' } }),
  );
  t.equal(opt.code, 0, `admitted with the opt-out\n${opt.stderr}`);
  const { pod, devices } = await boundDevices('multus-driver-opt');
  t.notOk(pod.spec.containers[0]!.resources?.limits?.[MULTUS], 'with the opt-out: nothing injected');
  t.equal(pod.spec.nodeName, NODE);
  t.equal(devices.length, 1);
  t.equal(devices[0]!.attributes['k8s.cni.cncf.io/resourceName'], MULTUS, "one device with the NAD's resourceName");
});

t.test('a GPU claim next to a device-plugin SR-IOV network keeps its VF and is bound', async (t) => {
  // The pod the dra-multus branch broke (it dropped the injection when unsure).
  const r = await e.apply(
    podOf('gpu-and-dp-vf', 'sriov-dp', {
      resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'dp-gpu' }],
      claims: [{ name: 'gpu' }],
    }),
  );
  t.equal(r.code, 0, `admitted\n${r.stderr}`);
  t.match(
    r.stderr,
    /Warning: dra\/sriov-dp: intel\.com\/sriov_vf added; pod claim gpu may hold its device instead/,
    'warned, naming what was done',
  );
  const { pod, devices } = await boundDevices('gpu-and-dp-vf', DP_NODE);
  t.equal(pod.spec.containers[0]!.resources?.limits?.[SRIOV_VF], '1', 'the VF from the device plugin is injected as before');
  t.equal(pod.spec.nodeName, DP_NODE, 'bound to the node whose device plugin advertises it');
  t.same(
    devices.map((d) => d.device),
    ['gpu-dp-0'],
    'and the GPU claim is allocated',
  );
});

t.test('a pod with its own claim for the network gets none added', async (t) => {
  const r = await e.apply(
    podOf('own-claim', 'claimed', {
      annotations: { 'netattach.io/networkClaims': 'claimed=gpu-nic' },
      resourceClaims: [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }],
      claims: [{ name: 'gpu-nic' }],
    }),
  );
  t.equal(r.code, 0, `admitted\n${r.stderr}`);
  // The server judges the claim's template (before issue 38 its DRA view lacked templateDevices: "unchecked").
  t.notMatch(r.stderr, /Warning:/, 'nothing to say: the NIC request selects the resourceName');
  const { pod, devices } = await boundDevices('own-claim');
  t.same(pod.spec.resourceClaims, [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }], 'only the claim the pod brought');
  t.same(pod.spec.containers[0]!.resources?.claims, [{ name: 'gpu-nic' }]);
  const nic = devices.filter((d) => d.attributes['k8s.cni.cncf.io/resourceName'] === CLAIMED);
  t.equal(nic.length, 1, 'exactly one NIC: its own');
  const gpu = devices.find((d) => d.device === 'gpu-0');
  t.ok(gpu, 'and the GPU');
  t.equal(
    nic[0]!.attributes['resource.kubernetes.io/pcieRoot'],
    gpu?.attributes['resource.kubernetes.io/pcieRoot'],
    'on the same PCIe root',
  );
});

t.test('explicit-claim path: one claim from the template per selection, allocated a device of the NAD resource', async (t) => {
  await e.applyOk(podOf('claimed-one', 'claimed'));
  const { pod, devices } = await boundDevices('claimed-one');
  t.same(
    pod.spec.resourceClaims,
    [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }],
    'netattach added one claim from the template',
  );
  t.same(pod.spec.containers[0]!.resources?.claims, [{ name: 'net-claimed-1' }], 'and its reference on the container');
  t.notOk(pod.spec.containers[0]!.resources?.requests?.[CLAIMED], 'no extended resource instead');
  t.equal(pod.spec.nodeName, NODE);
  t.equal(devices.length, 1);
  t.equal(
    devices[0]!.attributes['k8s.cni.cncf.io/resourceName'],
    CLAIMED,
    "the allocated device's resourceName is the NAD's: what Multus matches",
  );
  t.match(devices[0]!.attributes['k8s.cni.cncf.io/deviceID'], /^0000:3b:02\.\d$/, 'and it carries the device ID Multus passes to the CNI');
});

t.test('a pod selecting the network twice gets two claims and two devices', async (t) => {
  await e.applyOk(podOf('claimed-two', 'claimed@nic1, claimed@nic2'));
  const { pod, devices } = await boundDevices('claimed-two');
  t.equal(pod.spec.resourceClaims?.length, 2);
  t.equal(new Set(devices.map((d) => d.device)).size, 2, 'two distinct devices');
  for (const d of devices) t.equal(d.attributes['k8s.cni.cncf.io/resourceName'], CLAIMED);
});

t.test('extended-resource path: the injected request is served by the DeviceClass (KEP-5004)', async (t) => {
  await e.applyOk(podOf('extended-one', 'extended'));
  const { pod, devices } = await boundDevices('extended-one');
  t.equal(pod.spec.containers[0]!.resources?.limits?.[EXTENDED], '1', 'netattach injected the extended resource as before');
  t.notOk(pod.spec.resourceClaims, 'and no claim');
  t.ok(pod.status?.extendedResourceClaimStatus, 'the scheduler made a claim for the extended resource');
  t.equal(devices.length, 1);
  t.equal(devices[0]!.attributes['k8s.cni.cncf.io/resourceName'], EXTENDED, "the allocated device's resourceName is the NAD's");
});

t.test('a namespace without the template: the pod is denied, naming template, namespace and the fix', async (t) => {
  await e.applyOk([namespace('dra-empty')]);
  const n = nad({ namespace: 'dra-empty', name: 'claimed', config: macvlanConfig('claimed') }) as {
    metadata: { annotations: Record<string, string> };
  };
  n.metadata.annotations = { [RESOURCE_NAME]: CLAIMED, 'netattach.io/resourceClaimTemplate': 'net-claimed' };
  await e.applyOk(n as Obj);
  const p = podOf('no-template', 'claimed') as { metadata: { namespace: string } };
  p.metadata.namespace = 'dra-empty';
  const r = await e.apply(p as Obj);
  t.not(r.code, 0);
  t.match(r.stderr, DENIED_POD);
  t.match(r.stderr, /ResourceClaimTemplate net-claimed, which namespace dra-empty lacks/);
  t.match(r.stderr, /create it in namespace dra-empty/);
});

t.test('a reinvocation-safe patch: the pod as admitted passes again unchanged (dry run)', async (t) => {
  const stored = await getPod('claimed-one');
  const again = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'claimed-again', namespace: NS, annotations: stored.metadata.annotations },
    spec: {
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'net-claimed-1' }] } }],
      resourceClaims: stored.spec.resourceClaims,
    },
  };
  const out = JSON.parse(
    await e.cluster.kubectlOk(['create', '--dry-run=server', '-o', 'json', '-f', '-'], { input: JSON.stringify(again) }),
  ) as PodJson;
  t.same(out.spec.resourceClaims, stored.spec.resourceClaims, 'no second claim');
  t.same(out.spec.containers[0]!.resources?.claims, [{ name: 'net-claimed-1' }]);
});
