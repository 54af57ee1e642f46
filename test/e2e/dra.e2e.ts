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
    containers: Array<{ resources?: { requests?: Record<string, string>; limits?: Record<string, string>; claims?: Array<{ name: string }> } }>;
  };
  status?: {
    resourceClaimStatuses?: Array<{ name: string; resourceClaimName?: string }>;
    extendedResourceClaimStatus?: { resourceClaimName: string; requestMappings: Array<{ containerName: string; resourceName: string; requestName: string }> };
  };
}

const NS = 'dra';
const NODE = 'dra-node-1';
const DRIVER = 'net.dra.example.com';
const CLAIMED = 'example.com/net_claimed'; // served through explicit claims (template)
const EXTENDED = 'example.com/net_extended'; // served as an extended resource by a DeviceClass
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

function podOf(name: string, networks: string, extra: { annotations?: Record<string, string>; resourceClaims?: Obj[]; claims?: Obj[] } = {}): Obj {
  const spec = podSpec() as { containers: Obj[] } & Obj;
  if (extra.resourceClaims) spec['resourceClaims'] = extra.resourceClaims;
  if (extra.claims) spec.containers[0]!['resources'] = { claims: extra.claims };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, annotations: { [NETWORKS]: networks, ...extra.annotations } },
    spec,
  };
}

/** Waits for the pod to be bound and returns the devices allocated to each of its claims. */
async function boundDevices(name: string): Promise<{ pod: PodJson; devices: Array<{ claim: string; device: string; attributes: Record<string, string> }> }> {
  const pod = await eventually(`pod ${name} bound to ${NODE}`, async () => {
    const p = await getPod(name);
    return p.spec.nodeName ? p : undefined;
  }, SCHEDULED_MS);
  const claimNames = [
    ...(pod.status?.resourceClaimStatuses ?? []).map((s) => s.resourceClaimName).filter((n): n is string => !!n),
    ...(pod.spec.resourceClaims ?? []).map((c) => c.resourceClaimName).filter((n): n is string => !!n),
    ...(pod.status?.extendedResourceClaimStatus ? [pod.status.extendedResourceClaimStatus.resourceClaimName] : []),
  ];
  const devices: Array<{ claim: string; device: string; attributes: Record<string, string> }> = [];
  for (const claim of claimNames) {
    const c = await eventually(`claim ${claim} allocated`, async () => {
      const got = await e.getJson<{ status?: ClaimStatus }>(['resourceclaim', '-n', NS, claim]);
      return got.status?.allocation ? got : undefined;
    }, SCHEDULED_MS);
    for (const r of c.status!.allocation!.devices?.results ?? []) {
      devices.push({ claim, device: r.device, attributes: sliceDevices.get(r.device) ?? {} });
    }
  }
  return { pod, devices };
}

t.test('the node, the network DRA driver, classes, templates and NADs', async (t) => {
  // The node, as a kubelet would register it (no kubelet runs: pods are bound, never started).
  await e.applyOk({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } });
  const status = { status: { capacity: { cpu: '8', memory: '16Gi', pods: '110' }, allocatable: { cpu: '8', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] } };
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
    { apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'net-claimed' }, spec: { selectors: [byResourceName(CLAIMED)] } },
    { apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'net-extended' }, spec: { selectors: [byResourceName(EXTENDED)], extendedResourceName: EXTENDED } },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'gpu' },
      spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}" && "kind" in device.attributes["${DRIVER}"] && device.attributes["${DRIVER}"].kind == "gpu"` } }] },
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
  const claimedNad = nad({ namespace: NS, name: 'claimed', config: macvlanConfig('claimed') }) as { metadata: { annotations: Record<string, string> } };
  claimedNad.metadata.annotations = { [RESOURCE_NAME]: CLAIMED, 'netattach.io/resourceClaimTemplate': 'net-claimed' };
  const extendedNad = nad({ namespace: NS, name: 'extended', config: macvlanConfig('extended') }) as { metadata: { annotations: Record<string, string> } };
  extendedNad.metadata.annotations = { [RESOURCE_NAME]: EXTENDED };
  await e.applyOk([claimedNad as Obj, extendedNad as Obj]);
  // netattach sees the template before the pods come (its watch; a miss would be a GET anyway).
  await sleep(1000);
  t.pass('node, ResourceSlice, DeviceClasses, templates and NADs created');
});

t.test('a pod with its own claim for the network gets none added', async (t) => {
  await e.applyOk(
    podOf('own-claim', 'claimed', {
      annotations: { 'netattach.io/networkClaims': 'claimed=gpu-nic' },
      resourceClaims: [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }],
      claims: [{ name: 'gpu-nic' }],
    }),
  );
  const { pod, devices } = await boundDevices('own-claim');
  t.same(pod.spec.resourceClaims, [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }], 'only the claim the pod brought');
  t.same(pod.spec.containers[0]!.resources?.claims, [{ name: 'gpu-nic' }]);
  const nic = devices.filter((d) => d.attributes['k8s.cni.cncf.io/resourceName'] === CLAIMED);
  t.equal(nic.length, 1, 'exactly one NIC: its own');
  const gpu = devices.find((d) => d.device === 'gpu-0');
  t.ok(gpu, 'and the GPU');
  t.equal(nic[0]!.attributes['resource.kubernetes.io/pcieRoot'], gpu?.attributes['resource.kubernetes.io/pcieRoot'], 'on the same PCIe root');
});

t.test('explicit-claim path: one claim from the template per selection, allocated a device of the NAD resource', async (t) => {
  await e.applyOk(podOf('claimed-one', 'claimed'));
  const { pod, devices } = await boundDevices('claimed-one');
  t.same(pod.spec.resourceClaims, [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }], 'netattach added one claim from the template');
  t.same(pod.spec.containers[0]!.resources?.claims, [{ name: 'net-claimed-1' }], 'and its reference on the container');
  t.notOk(pod.spec.containers[0]!.resources?.requests?.[CLAIMED], 'no extended resource instead');
  t.equal(pod.spec.nodeName, NODE);
  t.equal(devices.length, 1);
  t.equal(devices[0]!.attributes['k8s.cni.cncf.io/resourceName'], CLAIMED, "the allocated device's resourceName is the NAD's: what Multus matches");
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
  const n = nad({ namespace: 'dra-empty', name: 'claimed', config: macvlanConfig('claimed') }) as { metadata: { annotations: Record<string, string> } };
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
    spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'net-claimed-1' }] } }], resourceClaims: stored.spec.resourceClaims },
  };
  const out = JSON.parse(await e.cluster.kubectlOk(['create', '--dry-run=server', '-o', 'json', '-f', '-'], { input: JSON.stringify(again) })) as PodJson;
  t.same(out.spec.resourceClaims, stored.spec.resourceClaims, 'no second claim');
  t.same(out.spec.containers[0]!.resources?.claims, [{ name: 'net-claimed-1' }]);
});
