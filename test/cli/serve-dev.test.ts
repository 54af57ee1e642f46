// `serve --dev` (what `npm start` runs): NADs from the cluster in the kubeconfig if it answers
// within 2 s, else the example NADs in examples/nads. The cluster here is a TCP listener on
// 127.0.0.1 that accepts connections and never answers, so only the 2 s deadline ends the wait.
//
// Broken-build recipes: in src/cli/serve.ts chooseNadSource, drop the `config.dev` fallback (serve
// then fails with "no NAD source") or call clusterReachable(kc, 200) (the fallback comes too early);
// either fails this test.
import t from 'tap';
import net from 'node:net';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { startServe } from '../../src/cli/serve.js';
import { request } from '../server/fixtures.js';
import { eventually, podCreate } from './policy-helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

t.test('--dev with a cluster that never answers: example NADs after the 2 s deadline', async (t) => {
  const sockets = new Set<net.Socket>();
  let connectedAt: number | undefined;
  const silent = net.createServer((s) => {
    connectedAt ??= Date.now();
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as net.AddressInfo).port;
  const dir = t.testdir({
    kubeconfig: [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' + port + '", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n'),
  });
  const out: string[] = [];
  const started = performance.now();
  const serving = await startServe(
    ['--dev', '--kubeconfig', join(dir, 'kubeconfig'), '--port', '0', '--health-port', '0', '--log-level', 'info'],
    {
      stdout: (s) => out.push(s),
      stderr: (s) => out.push(s),
      stdin: Readable.from([]),
      env: {},
      cwd: dir,
    },
  );
  const elapsed = performance.now() - started;
  if (serving === 'help') throw new Error('help');
  t.teardown(() => serving.server.close());
  const lines = out
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const chosen = lines.find((l) => l.msg === 'development: NADs are read from the examples');
  t.match(chosen, { source: 'directory', dir: join(ROOT, 'examples', 'nads'), reason: 'cluster not reachable' });
  t.notOk(lines.some((l) => l.msg === 'NADs are read from the cluster'));
  // From the probe's connection to the decision (the log line's ISO `time`): about the 2 s deadline.
  // The connection is accepted a little after the deadline starts, later on a loaded machine, so
  // the bound is 1 s: a deadline cut to 200 ms fails it, the real one never does.
  const waited = Date.parse(String(chosen?.time)) - (connectedAt ?? Infinity);
  t.ok(waited >= 1000, `waited for the cluster's 2 s deadline (${waited} ms after connecting)`);
  // Then gave up: the decision follows the connection by the deadline, not by the machine's load
  // (start-up before the probe, which the old absolute 30 s bound counted, is not the probe's
  // doing). Five deadlines still tell a wait from a hang; a hang never returns (tap's timeout).
  t.ok(waited < 5 * 2000, `then gave up (${waited} ms after connecting; start-up and all: ${Math.round(elapsed)} ms)`);

  // The example NADs are served: one of them is admitted, a name not among them is not.
  await eventually(async () => serving.server.readiness().ready, Boolean, 'readiness');
  const ca = readFileSync(join(ROOT, 'certs', 'ca.crt'), 'utf8');
  const send = async (networks: string) =>
    (await request(`${serving.url}/validate`, JSON.stringify(podCreate({ name: `p-${networks}`, uid: `u-${networks}`, networks })), { ca }))
      .json.response as {
      allowed: boolean;
      status?: { message: string };
    };
  const example = await send('macvlan-dhcp'); // macvlan-static assigns nothing to a pod without ips: denied
  t.equal(example.allowed, true, example.status?.message ?? 'an example NAD is found');
  const missing = await send('not-an-example');
  t.equal(missing.allowed, false);
  t.match(missing.status?.message, 'Not found: "default/not-an-example"');
});
