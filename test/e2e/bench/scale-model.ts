/**
 * The pure part of `npm run bench:scale` (scale.ts): the cluster it loads, the policies, the
 * review mix, and the report's arithmetic. Everything is a function of (seed, index), so the
 * runner never holds the pods: pod i, NAD j, review k can be rebuilt at any time, and a
 * review that collides finds a live pod with an address by index alone.
 *
 * The cluster:
 * - namespaces scale-00000 ... (every one labelled `bench.netattach.io/scale=true`);
 * - NAD j lives in namespace j mod N; 40 % SR-IOV Ethernet (resourceName, tuning with the mac
 *   capability), 40 % macvlan with host-local (the ips and mac capabilities), 20 % ib-sriov
 *   (resourceName, the infinibandGUID capability);
 * - pod i lives in namespace i mod min(N, M) (a namespace without a NAD holds no pod), attaches
 *   to one NAD of its namespace (20 %: two), 30 % set a MAC (SR-IOV, macvlan) or GUID (ib-sriov)
 *   on the first network, which is unique by construction (pod i's index is in its low 32 bits);
 *   20 % of those on macvlan ask for an IP; half the attachments name their interface;
 * - `dupPairs` twins: pod `dup-d` is a copy (same namespace, networks and address) of a live pod
 *   with an address: the audit must report both of each pair, nothing else under uniqueAddresses.
 * The review mix: review k is a fresh pod (index pods + k, so a fresh, unique address when it has
 * one) or, with probability `collide`, a twin of a live pod with an address, which must be denied.
 */

type Obj = Record<string, unknown>;

export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
export const RESOURCE_NAME = 'k8s.v1.cni.cncf.io/resourceName';
export const SCALE_LABEL = 'bench.netattach.io/scale';
export const IMAGE = 'registry.k8s.io/pause:3.10';

export interface ScaleSizes {
  namespaces: number;
  nads: number;
  pods: number;
  /** Live pod pairs sharing an address (audit findings to expect). */
  dupPairs: number;
  /** Share of reviews colliding with a live pod's address (0..1). */
  collide: number;
  seed: number;
}

export const DEFAULT_SIZES: ScaleSizes = { namespaces: 200, nads: 1000, pods: 5000, dupPairs: 10, collide: 0.1, seed: 1 };

/** Sizes from the environment (SCALE_*), the defaults otherwise; throws naming the variable and value. */
export function sizesFromEnv(env: Record<string, string | undefined>): ScaleSizes {
  const int = (k: string, d: number, min: number): number => {
    const raw = env[k];
    if (raw === undefined || raw === '') return d;
    if (!/^\d+$/.test(raw) || Number(raw) < min)
      throw new RangeError(`${k}: invalid value ${JSON.stringify(raw)}: a whole number, at least ${min}`);
    return Number(raw);
  };
  const s: ScaleSizes = {
    namespaces: int('SCALE_NAMESPACES', DEFAULT_SIZES.namespaces, 1),
    nads: int('SCALE_NADS', DEFAULT_SIZES.nads, 1),
    pods: int('SCALE_PODS', DEFAULT_SIZES.pods, 1),
    dupPairs: int('SCALE_DUP_PAIRS', DEFAULT_SIZES.dupPairs, 0),
    collide: DEFAULT_SIZES.collide,
    seed: int('SCALE_SEED', DEFAULT_SIZES.seed, 0),
  };
  const c = env.SCALE_COLLIDE;
  if (c !== undefined && c !== '') {
    const v = Number(c);
    if (!Number.isFinite(v) || v < 0 || v > 1)
      throw new RangeError(`SCALE_COLLIDE: invalid value ${JSON.stringify(c)}: a share between 0 and 1`);
    s.collide = v;
  }
  if (s.dupPairs > 0 && s.dupPairs * 20 > s.pods)
    throw new RangeError(`SCALE_DUP_PAIRS: ${s.dupPairs} pairs need at least ${s.dupPairs * 20} pods (have ${s.pods})`);
  return s;
}

// ------------------------------------------------------------------ hashing

/** A 32-bit hash of (seed, stream, index): the generators' only source of chance. */
export function hash32(seed: number, stream: number, i: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 0x632be5ab, 0xc2b2ae35) ^ Math.imul(i, 0x27d4eb2f);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

const S_NAD_KIND = 1;
const S_POD_NAD = 2;
const S_POD_TWO = 3;
const S_POD_ADDR = 4;
const S_POD_IPS = 5;
const S_POD_IFNAME = 6;
const S_REVIEW = 7;
const S_REVIEW_TARGET = 8;

const pct = (seed: number, stream: number, i: number): number => hash32(seed, stream, i) % 100;

// ------------------------------------------------------------------ namespaces and NADs

export const nsName = (k: number): string => `scale-${String(k).padStart(5, '0')}`;

export function namespaceObject(k: number): Obj {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName(k), labels: { [SCALE_LABEL]: 'true' } } };
}

export type NadKind = 'sriov' | 'macvlan' | 'ib-sriov';

export interface NadRef {
  index: number;
  namespace: string;
  name: string;
  kind: NadKind;
}

export function nadKind(seed: number, j: number): NadKind {
  const p = pct(seed, S_NAD_KIND, j);
  return p < 40 ? 'sriov' : p < 80 ? 'macvlan' : 'ib-sriov';
}

export function nadRef(s: ScaleSizes, j: number): NadRef {
  const kind = nadKind(s.seed, j);
  return { index: j, namespace: nsName(j % s.namespaces), name: `${kind}-${Math.floor(j / s.namespaces)}`, kind };
}

/** host-local's subnet of macvlan NAD j: 10.(j mod 200).0.0/16, gateway .0.1. */
const octet2 = (j: number): number => j % 200;

export function nadObject(s: ScaleSizes, j: number): Obj {
  const r = nadRef(s, j);
  const annotations: Record<string, string> = {};
  let config: Obj;
  if (r.kind === 'sriov') {
    annotations[RESOURCE_NAME] = `intel.com/sriov_pool_${j % 4}`;
    config = {
      cniVersion: '1.0.0',
      name: r.name,
      plugins: [
        {
          type: 'sriov',
          vlan: 100 + (j % 3000),
          spoofchk: 'on',
          ipam: { type: 'host-local', subnet: `10.${200 + (j % 50)}.${Math.floor(j / 50) % 256}.0/24` },
        },
        { type: 'tuning', capabilities: { mac: true } },
      ],
    };
  } else if (r.kind === 'macvlan') {
    config = {
      cniVersion: '1.0.0',
      name: r.name,
      plugins: [
        {
          type: 'macvlan',
          master: 'eth1',
          mode: 'bridge',
          capabilities: { ips: true },
          ipam: { type: 'host-local', subnet: `10.${octet2(j)}.0.0/16`, gateway: `10.${octet2(j)}.0.1` },
        },
        { type: 'tuning', capabilities: { mac: true } },
      ],
    };
  } else {
    annotations[RESOURCE_NAME] = 'mellanox.com/mlnx_sriov_ib';
    config = {
      cniVersion: '0.3.1',
      name: r.name,
      type: 'ib-sriov',
      pkey: `0x${(0x6600 + (j % 256)).toString(16)}`,
      link_state: 'enable',
      capabilities: { infinibandGUID: true },
    };
  }
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: r.name, namespace: r.namespace, ...(Object.keys(annotations).length ? { annotations } : {}) },
    spec: { config: JSON.stringify(config) },
  };
}

/** Namespaces that hold pods: those with at least one NAD. */
export const podNamespaces = (s: ScaleSizes): number => Math.min(s.namespaces, s.nads);

/** How many NADs namespace k holds (NAD j is in namespace j mod N). */
export function nadsIn(s: ScaleSizes, k: number): number {
  return k >= s.nads ? 0 : Math.floor((s.nads - 1 - k) / s.namespaces) + 1;
}

// ------------------------------------------------------------------ pods

export interface PodAddress {
  kind: 'mac' | 'infiniband-guid';
  value: string;
  /** `ns/name` of the NAD it is set on. */
  network: string;
}

export interface PodPlan {
  namespace: string;
  name: string;
  networks: Array<{ nad: NadRef; interface?: string; mac?: string; 'infiniband-guid'?: string; ips?: string[] }>;
  address?: PodAddress;
  ips: boolean;
}

const hex2 = (n: number): string => (n & 0xff).toString(16).padStart(2, '0');
const bytes4 = (v: number): string => [v >>> 24, v >>> 16, v >>> 8, v].map(hex2).join(':');

/** MAC of index i: locally administered unicast 02:00 + the 32-bit index. */
export const macOf = (i: number): string => `02:00:${bytes4(i >>> 0)}`;
/** GUID of index i: 00:11:22:33 + the 32-bit index (inside the hardware policy's range). */
export const guidOf = (i: number): string => `00:11:22:33:${bytes4(i >>> 0)}`;

const IFPREFIX: Record<NadKind, string> = { sriov: 'sr', macvlan: 'mv', 'ib-sriov': 'ib' };

/** The plan of pod i (i ≥ pods: a review's fresh pod, same distribution, an unused address). */
export function podPlan(s: ScaleSizes, i: number, name = `pod-${i}`): PodPlan {
  const nk = podNamespaces(s);
  const k = i % nk;
  const c = nadsIn(s, k);
  const a = hash32(s.seed, S_POD_NAD, i) % c;
  const first = nadRef(s, k + a * s.namespaces);
  const refs = [first];
  if (c > 1 && pct(s.seed, S_POD_TWO, i) < 20) refs.push(nadRef(s, k + ((a + 1) % c) * s.namespaces));
  const plan: PodPlan = { namespace: nsName(k), name, networks: [], ips: false };
  refs.forEach((nad, n) => {
    const el: PodPlan['networks'][number] = { nad };
    if (pct(s.seed, S_POD_IFNAME, i * 2 + n) < 50) el.interface = `${IFPREFIX[nad.kind]}${n + 1}`;
    plan.networks.push(el);
  });
  const el = plan.networks[0]!;
  if (pct(s.seed, S_POD_ADDR, i) < 30) {
    const network = `${first.namespace}/${first.name}`;
    if (first.kind === 'ib-sriov') {
      el['infiniband-guid'] = guidOf(i);
      plan.address = { kind: 'infiniband-guid', value: guidOf(i), network };
    } else {
      el.mac = macOf(i);
      plan.address = { kind: 'mac', value: macOf(i), network };
    }
    if (first.kind === 'macvlan' && pct(s.seed, S_POD_IPS, i) < 20) {
      // inside host-local's 10.X.0.0/16, never .0, .255 or the gateway 10.X.0.1
      el.ips = [`10.${octet2(first.index)}.${1 + (i % 250)}.${2 + (Math.floor(i / 250) % 250)}`];
      plan.ips = true;
    }
  }
  return plan;
}

export const hasAddress = (s: ScaleSizes, i: number): boolean => pct(s.seed, S_POD_ADDR, i) < 30;

/** The first live pod with an address at or after index `from` (wrapping), for twins. */
export function podWithAddress(s: ScaleSizes, from: number): number {
  for (let n = 0; n < s.pods; n++) {
    const i = (from + n) % s.pods;
    if (hasAddress(s, i)) return i;
  }
  throw new Error(`no pod of ${s.pods} has an address`);
}

/** The live pod twin d copies: spread over the pods, distinct for distinct d. */
export function dupTarget(s: ScaleSizes, d: number): number {
  return podWithAddress(s, Math.floor((d * s.pods) / Math.max(1, s.dupPairs)));
}

export function podObject(p: PodPlan): Obj {
  const networks = p.networks.map(({ nad, ...rest }) => ({ name: nad.name, ...rest }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: { app: p.name.replace(/-\d+$/, ''), [SCALE_LABEL]: 'true' },
      annotations: { [NETWORKS]: JSON.stringify(networks) },
    },
    spec: {
      containers: [{ name: 'app', image: IMAGE, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
      terminationGracePeriodSeconds: 1,
    },
  };
}

// ------------------------------------------------------------------ the review mix

export interface ReviewPlan {
  k: number;
  pod: PodPlan;
  /** A twin of live pod `of`: must be denied (uniqueAddresses). */
  collides: boolean;
  of?: number;
}

export function reviewPlan(s: ScaleSizes, k: number, run = 'r'): ReviewPlan {
  const name = `${run}-${k}`;
  if (hash32(s.seed, S_REVIEW, k) / 2 ** 32 < s.collide) {
    const of = podWithAddress(s, hash32(s.seed, S_REVIEW_TARGET, k) % s.pods);
    return { k, pod: { ...podPlan(s, of), name }, collides: true, of };
  }
  return { k, pod: podPlan(s, s.pods + k, name), collides: false };
}

/** The pods that the Audit rule (requestedFields: ips) must report: live pods (and twins) asking for ips. */
export function expectedIpsFindings(s: ScaleSizes): number {
  let n = 0;
  for (let i = 0; i < s.pods; i++) if (podPlan(s, i).ips) n++;
  for (let d = 0; d < s.dupPairs; d++) if (podPlan(s, dupTarget(s, d)).ips) n++;
  return n;
}

// ------------------------------------------------------------------ policies

/** The four policies of issue 28: isolation, uniqueAddresses, hardware + interface rules, an Audit rule. */
export function policies(): Obj[] {
  const p = (name: string, spec: Obj): Obj => ({
    apiVersion: 'netattach.io/v1alpha1',
    kind: 'NetworkAttachmentPolicy',
    metadata: { name },
    spec,
  });
  return [
    p('scale-isolation', { rules: { allowedNetworks: { ownNamespace: true, globalNamespaces: ['default'] } } }),
    p('scale-unique', { rules: { uniqueAddresses: { mac: 'Network', 'infiniband-guid': 'Cluster' } } }),
    p('scale-hardware', {
      namespaceSelector: { matchLabels: { [SCALE_LABEL]: 'true' } },
      rules: {
        hardwareAddresses: {
          macPrefixes: ['02:00'],
          guidRanges: [{ from: '00:11:22:33:00:00:00:00', to: '00:11:22:33:ff:ff:ff:ff' }],
          forbidSpecialValues: true,
        },
        interfaceNames: { allowed: ['sr*', 'mv*', 'ib*', 'net*'] },
      },
    }),
    p('scale-audit-ips', { action: 'Audit', rules: { requestedFields: { forbidden: ['ips'] } } }),
  ];
}

// ------------------------------------------------------------------ AdmissionReview

const podKind = { group: '', version: 'v1', kind: 'Pod' };
const podResource = { group: '', version: 'v1', resource: 'pods' };

/** A Pod CREATE review as the API server sends it; the user is the ReplicaSet controller. */
export function admissionReview(pod: Obj, uid: string): Obj {
  const md = pod.metadata as { name: string; namespace: string };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: podKind,
      resource: podResource,
      requestKind: podKind,
      requestResource: podResource,
      name: md.name,
      namespace: md.namespace,
      operation: 'CREATE',
      object: pod,
      oldObject: null,
      dryRun: false,
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
      },
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

// ------------------------------------------------------------------ report math

/** Nearest-rank percentile; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export interface Sample {
  /** ms since the process started */
  t: number;
  rssMb: number;
  heapUsedMb?: number;
  heapTotalMb?: number;
}

/** The last sample at or before `t` (undefined before the first). */
export function sampleAt(samples: readonly Sample[], t: number): Sample | undefined {
  let out: Sample | undefined;
  for (const s of samples) {
    if (s.t > t) break;
    out = s;
  }
  return out;
}

/** Largest RSS and largest used heap over the samples up to `until` (all by default). */
export function peaks(samples: readonly Sample[], until = Infinity): { rssMb: number; heapUsedMb: number } {
  let rssMb = NaN;
  let heapUsedMb = NaN;
  for (const s of samples) {
    if (s.t > until) break;
    if (!(s.rssMb <= rssMb)) rssMb = s.rssMb;
    if (s.heapUsedMb !== undefined && !(s.heapUsedMb <= heapUsedMb)) heapUsedMb = s.heapUsedMb;
  }
  return { rssMb, heapUsedMb };
}

/** µs of CPU per call. */
export const cpuPerCallUs = (cpuSeconds: number, calls: number): number => (calls > 0 ? (cpuSeconds * 1e6) / calls : NaN);

/** KiB per pod between two sizes (MB) at two pod counts. */
export const kibPerPod = (mbA: number, podsA: number, mbB: number, podsB: number): number => ((mbB - mbA) * 1024) / (podsB - podsA);

export interface VerdictTally {
  collisions: number;
  collisionsDenied: number;
  fresh: number;
  freshDenied: number;
  /** Reviews that failed (transport error, non-200, unparseable): none is expected. */
  errors: number;
  /** Up to 5 examples of wrong verdicts, for the report. */
  wrong: string[];
}

export const emptyTally = (): VerdictTally => ({ collisions: 0, collisionsDenied: 0, fresh: 0, freshDenied: 0, errors: 0, wrong: [] });

/** Counts one pod's outcome: denied (at /mutate or /validate) or allowed at both. */
export function tally(t: VerdictTally, r: ReviewPlan, denied: boolean, message = ''): void {
  if (r.collides) {
    t.collisions++;
    if (denied) t.collisionsDenied++;
    else if (t.wrong.length < 5) t.wrong.push(`${r.pod.namespace}/${r.pod.name} (twin of pod-${r.of}) was admitted`);
  } else {
    t.fresh++;
    if (denied) {
      t.freshDenied++;
      if (t.wrong.length < 5) t.wrong.push(`${r.pod.namespace}/${r.pod.name} was denied: ${message.slice(0, 300)}`);
    }
  }
}

export const verdictsRight = (t: VerdictTally): boolean => t.collisionsDenied === t.collisions && t.freshDenied === 0 && t.errors === 0;

/** A Markdown table. */
export function table(head: string[], rows: Array<Array<string | number>>): string {
  const cell = (v: string | number): string => (typeof v === 'number' ? (Number.isFinite(v) ? fmt(v) : '–') : v);
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join(
    '\n',
  );
}

/** Three significant figures at most, no exponent. */
export function fmt(v: number): string {
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
