// Issue 24, finding 3, replayed at the production heap cap: five live pods carrying the hostile
// annotation (a 200 KB key in the path of 100 errors each) made the PolicyReport writer of
// `netattach serve` build a ~100 MB report and die of OOM, again after each restart, and
// `netattach audit -o json` on the same pods write 100 MB (516 MB RSS). Here `serve` runs in
// cluster mode against a small fake apiserver (pods, namespaces, NADs, the PolicyReport CRD,
// Leases, server-side apply) and must stay alive, answer a valid review, and write every
// namespace's report, each far under etcd's limit; `netattach audit` must print a bounded output.
import t from 'tap';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { PRODUCTION_NODE_OPTIONS, sleep, startServe, validReviewAnswered, type Serve } from '../../bench/hostile-lib.js';
import { hostileNetworks } from '../audit/helpers.js';

t.setTimeout(300_000);
const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
/** etcd's default object limit: a report must stay well under it. */
const ETCD_LIMIT = 1.5 * 1024 * 1024;
const REPORTS = '/apis/wgpolicyk8s.io/v1alpha2';

const pod = (namespace: string, name: string, networks: string) => ({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: { namespace, name, uid: `u-${namespace}-${name}`, resourceVersion: '10', annotations: { [NETWORKS]: networks } },
});
const sriovNad = {
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { namespace: 'tenant', name: 'sriov-a', uid: 'u-nad', resourceVersion: '11', annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' } },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'sriov-a', plugins: [{ type: 'sriov', capabilities: { mac: true, ips: true } }] }) },
};

/** Lists (watches stay open), the PolicyReport CRD's discovery, GET 404 otherwise, and apply PATCHes recorded by path. */
async function fakeApiserver(pods: object[]) {
  const lists: Record<string, object[]> = {
    '/api/v1/pods': pods,
    '/api/v1/namespaces': ['tenant', 'evil'].map((name) => ({ metadata: { name, uid: `ns-${name}`, labels: { 'kubernetes.io/metadata.name': name } } })),
    '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions': [sriovNad],
    [`${REPORTS}/policyreports`]: [],
  };
  const applied = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Only sizes are kept: a 100 MB report must not exhaust the test process.
      if (size < 4 << 20) chunks.push(c);
    });
    req.on('end', () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'PATCH') {
        applied.set(url.pathname, size);
        if (size >= 4 << 20) return json(413, { kind: 'Status', code: 413, reason: 'RequestEntityTooLarge', message: 'request entity too large' });
        return json(200, JSON.parse(Buffer.concat(chunks).toString('utf8')));
      }
      if (url.pathname === REPORTS) return json(200, { kind: 'APIResourceList', groupVersion: 'wgpolicyk8s.io/v1alpha2', resources: [{ name: 'policyreports', namespaced: true, kind: 'PolicyReport' }] });
      const items = lists[url.pathname];
      if (!items) return json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${url.pathname} not found` });
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        return;
      }
      json(200, { kind: 'List', metadata: { resourceVersion: '20' }, items });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    applied,
    kubeconfig: `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: fake, user: u}\ncurrent-context: c\n`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const reportPath = (ns: string) => `${REPORTS}/namespaces/${ns}/policyreports/netattach`;

t.test('the report writer of serve with five hostile pods: alive, every namespace written, each report far under etcd\'s limit', async (t) => {
  const pods = [...Array.from({ length: 5 }, (_, i) => pod('evil', `h-${i}`, hostileNetworks())), pod('tenant', 'du-0', 'missing-net'), pod('tenant', 'du-1', 'sriov-a')];
  const api = await fakeApiserver(pods);
  const dir = mkdtempSync(join(tmpdir(), 'netattach-reports-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, api.kubeconfig);
  let s: Serve | undefined;
  t.teardown(async () => {
    await s?.stop();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  s = await startServe({ nadsDir: false, args: ['--kubeconfig', kubeconfig, '--no-dra', ...(process.env.REPORTS_ARGS ? process.env.REPORTS_ARGS.split(' ') : [])] });
  let stderr = '';
  s.child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + String(d)).slice(-4000)));
  // The audit judges the pods, then the writer (holding the Lease) writes both namespaces' reports.
  for (let i = 0; i < 600 && !(api.applied.has(reportPath('evil')) && api.applied.has(reportPath('tenant'))) && !s.exited(); i++) await sleep(100);
  await sleep(1000);
  if (process.env.REPORTS_DEBUG) console.error(s.lines.join('\n'));
  t.notOk(s.exited(), `the process is alive${s.exited() ? ` (exit ${s.child.exitCode}, ${s.child.signalCode}): ${stderr}` : ''}`);
  t.ok(api.applied.has(reportPath('tenant')), 'the tenant\'s report is written');
  t.ok(api.applied.has(reportPath('evil')), 'the hostile namespace\'s report is written');
  for (const [path, size] of api.applied) if (path.includes('/policyreports/')) t.ok(size <= ETCD_LIMIT / 2, `${path}: ${size} bytes`);
  const valid = await validReviewAnswered(s);
  t.ok(valid.ok, `a valid review is answered (${valid.detail}, ${valid.ms.toFixed(0)} ms)`);
  const { rss, peak } = s.rssMb();
  t.ok(peak < 250, `RSS ${rss.toFixed(0)} MB, peak ${peak.toFixed(0)} MB < 250 MB`);
});
