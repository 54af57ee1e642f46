/**
 * The NRI corpus on a real node: each pod is created once through network-resources-injector
 * v1.9.0 and once through netattach, runs (or not) on the node, and the devices the fake device
 * plugin allocated for it (infra/node/fake-device-plugin: one JSON record per Allocate container
 * request) are compared. They must be the same, except where docs/nri-differences.json documents
 * a difference for that pod, and a documented difference that does not show is reported too, as
 * in the admission-level oracle (../nri-oracle.e2e.ts).
 *
 * What is compared is a "device view" of each result, written in the same JSON-pointer space as
 * the oracle's `{outcome, pod}`, so the table's path patterns excuse the same differences here:
 *
 *   { outcome: 'running' | 'pending' | 'refused',
 *     pod?: { spec: { containers: [ { name, resources: { requests: { <resource>: <devices allocated> } } } ] } } }
 *
 * (containers in the pod's own order; `pod` is absent when the pod was refused). A container whose
 * devices NRI put elsewhere (default-container) differs under /pod/spec/containers/N/resources; a
 * count NRI left lower (raise-user-value) under .../resources/requests/<resource>; a pod NRI could
 * not create (comma-resource-name) at /outcome and /pod.
 *
 * A pod lists only the differences that change devices or the outcome (default-container,
 * raise-user-value, comma-resource-name, ...): one that shows only in the pod object
 * (podnetinfo-labels) would be reported as unused here.
 *
 * The node suite supplies `create`: it creates the pod through the named webhook, waits until it
 * runs (or stays Pending, or is refused), reads the plugin's new records, attributes them to
 * containers (attributeRecords below, from each container's netprobe log), deletes the pod and
 * waits until it is gone, so that every pod starts with all devices free.
 */
import { Nri, type NriOptions } from '../lib/nri.js';
import { explain, loadDifferences, type Delta, type DifferenceTable } from '../lib/nri-differences.js';
import fastJsonPatch from 'fast-json-patch';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One line of the fake device plugin's --record file. */
export interface AllocateRecord {
  resource: string;
  devices: string[];
  env: Record<string, string>;
  time: string;
}

export type Outcome = 'running' | 'pending' | 'refused';

export interface CreateResult {
  outcome: Outcome;
  /** This pod's Allocate records, each with the container it went to. */
  allocations: { container: string; record: AllocateRecord }[];
  /** Why, for a refused or pending pod (the apiserver's message, the scheduler's event). */
  message?: string;
}

export interface Webhook {
  name: 'nri' | 'netattach';
  /** Base URL of its HTTPS server (`/mutate` for NRI). */
  url: string;
}

export interface CorpusPod {
  name: string;
  pod: Obj;
  /** ids in docs/nri-differences.json that this pod shows, and only these. */
  differences?: string[];
}

export interface DeviceView {
  outcome: Outcome;
  pod?: { spec: { containers: { name: string; resources: { requests: Record<string, number> } }[] } };
}

export interface CorpusResult {
  name: string;
  nri: CreateResult;
  netattach: CreateResult;
  /** Devices per container and resource, by webhook (the views compared). */
  views: { nri: DeviceView; netattach: DeviceView };
  /** JSON Patch operations from NRI's view to netattach's. */
  deltas: Delta[];
  /** Deltas no listed difference explains: must be empty. */
  unexplained: Delta[];
  /** Listed differences that explain no delta: must be empty. */
  unused: string[];
}

// ---------------------------------------------------------------------------------- pure parts

/** A netprobe log (infra/node/netprobe): its `env: K=V` lines and `file: PATH` contents. */
export function parseNetprobeLog(text: string): { env: Record<string, string>; files: Record<string, string>; ready: boolean } {
  const env: Record<string, string> = {};
  const files: Record<string, string> = {};
  let ready = false;
  let file: string | undefined;
  for (const line of text.split('\n')) {
    if (line === 'netprobe: ready') {
      ready = true;
      file = undefined;
    } else if (line.startsWith('env: ') && file === undefined) {
      const kv = line.slice('env: '.length);
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (line.startsWith('file: ')) {
      file = line.slice('file: '.length);
      files[file] = '';
    } else if (line.startsWith('missing: ')) {
      file = undefined;
    } else if (file !== undefined) {
      files[file] += `${line}\n`;
    }
  }
  return { env, files, ready };
}

/**
 * Which container each record went to: the one whose environment holds every variable the
 * record's Allocate answer set, with the same value. A record no container shows, or more than
 * one shows, is an error (returned, not thrown: the caller's assertion names it).
 */
export function attributeRecords(
  records: readonly AllocateRecord[],
  envByContainer: Readonly<Record<string, Record<string, string>>>,
): { allocations: { container: string; record: AllocateRecord }[]; errors: string[] } {
  const allocations: { container: string; record: AllocateRecord }[] = [];
  const errors: string[] = [];
  for (const record of records) {
    const keys = Object.entries(record.env);
    const hits = Object.entries(envByContainer)
      .filter(([, env]) => keys.length > 0 && keys.every(([k, v]) => env[k] === v))
      .map(([name]) => name);
    if (hits.length === 1) allocations.push({ container: hits[0]!, record });
    else
      errors.push(`${record.resource} ${record.devices.join(',')}: ${hits.length === 0 ? 'in no container' : `in ${hits.join(' and ')}`}`);
  }
  return { allocations, errors };
}

/** The device view of one result (see the header), containers in `pod`'s order. */
export function deviceView(pod: Obj, r: CreateResult): DeviceView {
  if (r.outcome === 'refused') return { outcome: r.outcome };
  const names: string[] = (pod.spec?.containers ?? []).map((c: Obj) => String(c.name));
  for (const a of r.allocations) if (!names.includes(a.container)) names.push(a.container);
  const containers = names.map((name) => {
    const requests: Record<string, number> = {};
    for (const a of r.allocations) {
      if (a.container === name) requests[a.record.resource] = (requests[a.record.resource] ?? 0) + a.record.devices.length;
    }
    return { name, resources: { requests } };
  });
  return { outcome: r.outcome, pod: { spec: { containers } } };
}

/** Deltas between the two views, and which of them the listed differences excuse. */
export function compareViews(nri: DeviceView, netattach: DeviceView, listed: readonly string[], table: DifferenceTable) {
  const deltas = fastJsonPatch.compare(nri, netattach) as Delta[];
  return { deltas, ...explain(deltas, listed, table) };
}

// ------------------------------------------------------------------------------------- the run

export interface RunOptions {
  /** The NRI binary (infra/build-nri.sh prints its directory: <dir>/webhook). */
  nriBin: string;
  /** How to run it: everything but `bin` (lib/nri.ts). The node suite adds -injectHugepageDownApi. */
  nri: Omit<NriOptions, 'bin'>;
  /** netattach's base URL. */
  netattachUrl: string;
  pods: readonly CorpusPod[];
  create: (webhook: Webhook, pod: Obj) => Promise<CreateResult>;
  table?: DifferenceTable;
  /** Starts NRI; by default lib/nri.ts's Nri (tests replace it). */
  startNri?: (options: NriOptions) => Promise<{ url: string; stop: () => Promise<void> }>;
}

async function startRealNri(options: NriOptions): Promise<{ url: string; stop: () => Promise<void> }> {
  const nri = new Nri(options);
  try {
    await nri.start();
    await nri.waitReady();
  } catch (e) {
    await nri.stop();
    throw e;
  }
  return { url: nri.url, stop: () => nri.stop() };
}

/**
 * Starts NRI, creates every pod through NRI and then through netattach (one at a time: devices
 * are few), stops NRI, and returns per pod the devices each webhook led to and the differences.
 */
export async function runNriCorpus(o: RunOptions): Promise<CorpusResult[]> {
  const table = o.table ?? loadDifferences();
  for (const p of o.pods) {
    const unknown = (p.differences ?? []).filter((id) => !table.differences.some((d) => d.id === id));
    if (unknown.length > 0) throw new Error(`${p.name}: not in docs/nri-differences.json: ${unknown.join(', ')}`);
  }
  const nri = await (o.startNri ?? startRealNri)({ ...o.nri, bin: o.nriBin });
  const results: CorpusResult[] = [];
  try {
    for (const p of o.pods) {
      const byNri = await o.create({ name: 'nri', url: nri.url }, structuredClone(p.pod));
      const byNetattach = await o.create({ name: 'netattach', url: o.netattachUrl }, structuredClone(p.pod));
      const views = { nri: deviceView(p.pod, byNri), netattach: deviceView(p.pod, byNetattach) };
      results.push({
        name: p.name,
        nri: byNri,
        netattach: byNetattach,
        views,
        ...compareViews(views.nri, views.netattach, p.differences ?? [], table),
      });
    }
  } finally {
    await nri.stop();
  }
  return results;
}
