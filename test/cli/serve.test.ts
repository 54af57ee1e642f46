import t, { type Test } from 'tap';
import https from 'node:https';
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { draSourceOf, parseServeArgs, parseSize, run, startServe } from '../../src/cli/serve.js';
import type { CliIO } from '../../src/cli/io.js';
import { makeCerts, podReview, request } from '../server/fixtures.js';
import { eventually } from './policy-helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

function io(cwd: string, env: NodeJS.ProcessEnv = {}): CliIO & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (s) => out.push(s), stderr: (s) => err.push(s), stdin: Readable.from([]), env, cwd };
}

t.test('defaults, environment and flags (the flag wins)', async (t) => {
  const c = parseServeArgs(['--tls-dir', 'tls'], {}, '/w', '/pkg');
  if (c === 'help') throw new Error('help');
  t.match(c.server, { host: '0.0.0.0', port: 8443, healthPort: 8080, bodyLimit: 4 * 1024 * 1024, shutdownGraceMs: 20_000 });
  t.same(c.server.tls, { certFile: '/w/tls/tls.crt', keyFile: '/w/tls/tls.key', clientCaFile: undefined });
  t.same(c.server.admission, {
    defaultNetworkNamespace: 'kube-system',
    resourceNameKeys: ['k8s.v1.cni.cncf.io/resourceName'],
    podNetInfo: { enabled: false, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo', hugepages: false },
    pluginReads: new Map(),
    addressSharingOwners: ['kubevirt.io/VirtualMachineInstance'],
    immutableNetworks: false,
  });
  t.notOk('multusDefaultNetworks' in c.server.admission, 'not stated unless given: collisions are warnings then');
  t.equal(c.logLevel, 'info');
  t.equal(c.dev, false);

  const env = {
    NETATTACH_PORT: '9443',
    NETATTACH_HEALTH_PORT: '9090',
    NETATTACH_HOST: '::',
    NETATTACH_TLS_CERT: 'c.pem',
    NETATTACH_TLS_KEY: 'k.pem',
    NETATTACH_CLIENT_CA: 'ca.pem',
    NETATTACH_NADS: 'nads',
    NETATTACH_LOG_LEVEL: 'debug',
    NETATTACH_DEFAULT_NETWORK_NAMESPACE: 'multus',
    NETATTACH_PODNETINFO: 'true',
    NETATTACH_RESOURCE_NAME_KEYS: 'a/b, c/d',
    NETATTACH_BODY_LIMIT: '512Ki',
    NETATTACH_SHUTDOWN_GRACE: '5s',
    NETATTACH_POLICY: 'p.yaml',
    NETATTACH_HUGEPAGES_DOWNWARD_API: 'yes',
    NETATTACH_PLUGIN_READS: 'my-cni=mac,ips; other=guid',
  };
  const e = parseServeArgs([], env, '/w', '/pkg');
  if (e === 'help') throw new Error('help');
  t.match(e.server, { host: '::', port: 9443, healthPort: 9090, bodyLimit: 512 * 1024, shutdownGraceMs: 5000, policyFile: '/w/p.yaml' });
  t.same(e.server.tls, { certFile: '/w/c.pem', keyFile: '/w/k.pem', clientCaFile: '/w/ca.pem' });
  t.same(e.server.admission.resourceNameKeys, ['k8s.v1.cni.cncf.io/resourceName', 'a/b', 'c/d']);
  t.equal(e.server.admission.podNetInfo.enabled, true);
  t.equal(e.server.admission.podNetInfo.hugepages, true);
  t.equal(e.server.admission.defaultNetworkNamespace, 'multus');
  t.equal(e.nadsDir, '/w/nads');
  t.equal(e.logLevel, 'debug');
  t.same(
    [...e.server.admission.pluginReads].map(([k, v]) => [k, [...v]]),
    [
      ['my-cni', ['mac', 'ips']],
      ['other', ['guid']],
    ],
  );

  const f = parseServeArgs(
    ['--port', '1', '--resource-name-key', 'x/y', '--log-level', 'warn', '--plugin-reads', 'x-cni=mac'],
    env,
    '/w',
    '/pkg',
  );
  if (f === 'help') throw new Error('help');
  t.same(
    [...f.server.admission.pluginReads].map(([k, v]) => [k, [...v]]),
    [['x-cni', ['mac']]],
    'the flag replaces the environment',
  );
  const g = parseServeArgs(
    ['--tls-dir', 'tls', '--immutable-networks', '--address-sharing-owner', 'example.com/Mover'],
    { NETATTACH_ADDRESS_SHARING_OWNERS: 'kubevirt.io/VirtualMachineInstance' },
    '/w',
    '/pkg',
  );
  if (g === 'help') throw new Error('help');
  t.equal(g.server.admission.immutableNetworks, true);
  t.same(g.server.admission.addressSharingOwners, ['example.com/Mover'], 'the flag replaces the default and the environment');
  const off = parseServeArgs(
    ['--tls-dir', 'tls'],
    { NETATTACH_ADDRESS_SHARING_OWNERS: '', NETATTACH_IMMUTABLE_NETWORKS: 'true' },
    '/w',
    '/pkg',
  );
  if (off === 'help') throw new Error('help');
  t.same(off.server.admission.addressSharingOwners, [], 'an empty environment variable turns sharing off');
  t.equal(off.server.admission.immutableNetworks, true);
  const shifted = parseServeArgs(['--tls-dir', 'tls'], { NETATTACH_MULTUS_DEFAULT_NETWORKS: '2' }, '/w', '/pkg');
  if (shifted === 'help') throw new Error('help');
  t.equal(shifted.server.admission.multusDefaultNetworks, 2, 'NETATTACH_MULTUS_DEFAULT_NETWORKS');
  const flagged = parseServeArgs(
    ['--tls-dir', 'tls', '--multus-default-networks', '1'],
    { NETATTACH_MULTUS_DEFAULT_NETWORKS: '2' },
    '/w',
    '/pkg',
  );
  if (flagged === 'help') throw new Error('help');
  t.equal(flagged.server.admission.multusDefaultNetworks, 1, 'the flag wins');
  t.equal(f.server.port, 1);
  t.same(f.server.admission.resourceNameKeys, ['k8s.v1.cni.cncf.io/resourceName', 'x/y']);
  t.equal(f.logLevel, 'warn');

  const h = parseServeArgs(['--tls-dir', 'tls', '--hugepages-downward-api'], {}, '/w', '/pkg');
  if (h === 'help') throw new Error('help');
  t.same(h.server.admission.podNetInfo, { enabled: false, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo', hugepages: true });
  t.throws(
    () => parseServeArgs(['--tls-dir', 'tls'], { NETATTACH_HUGEPAGES_DOWNWARD_API: 'maybe' }, '/w', '/pkg'),
    /NETATTACH_HUGEPAGES_DOWNWARD_API: invalid value "maybe"/,
  );
});

t.test('enforcement and audit options', async (t) => {
  const d = parseServeArgs(['--dev'], {}, '/w', '/pkg');
  if (d === 'help') throw new Error('help');
  t.equal(d.server.enforcement, 'enforce');
  t.same(d.audit, { enabled: true, podsPerSecond: 1000 });
  const f = parseServeArgs(['--dev', '--enforcement', 'observe', '--no-audit', '--audit-rate', '250'], {}, '/w', '/pkg');
  if (f === 'help') throw new Error('help');
  t.equal(f.server.enforcement, 'observe');
  t.same(f.audit, { enabled: false, podsPerSecond: 250 });
  const e = parseServeArgs(
    ['--dev'],
    { NETATTACH_ENFORCEMENT: 'observe', NETATTACH_NO_AUDIT: 'true', NETATTACH_AUDIT_RATE: '50' },
    '/w',
    '/pkg',
  );
  if (e === 'help') throw new Error('help');
  t.equal(e.server.enforcement, 'observe');
  t.same(e.audit, { enabled: false, podsPerSecond: 50 });
});

t.test('--dev: certificates in the package certs/, loopback only', async (t) => {
  const c = parseServeArgs(['--dev'], {}, '/w', '/pkg');
  if (c === 'help') throw new Error('help');
  t.equal(c.server.host, '127.0.0.1');
  t.equal(c.generateTlsIn, '/pkg/certs');
  t.equal(c.server.tls.certFile, '/pkg/certs/tls.crt');
});

t.test('bad options are refused with the option and the value named', async (t) => {
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [[], {}, /no certificate: give --tls-dir/],
    [['--tls-cert', 'a'], {}, /--tls-cert and --tls-key go together/],
    [['--tls-dir', 'd', '--tls-cert', 'a', '--tls-key', 'b'], {}, /alternatives/],
    [['--dev', '--port', 'https'], {}, /--port: invalid value "https"/],
    [['--dev', '--health-port', '70000'], {}, /--health-port: invalid value "70000"/],
    [['--dev', '--body-limit', 'lots'], {}, /--body-limit: invalid value "lots"/],
    [['--dev', '--body-limit', '10'], {}, /at least 1024 bytes/],
    [['--dev', '--shutdown-grace', '5'], {}, /--shutdown-grace: invalid value "5"/],
    [['--dev', '--log-level', 'loud'], {}, /--log-level: unsupported value "loud"/],
    [['--dev'], { NETATTACH_PODNETINFO: 'maybe' }, /NETATTACH_PODNETINFO: invalid value "maybe"/],
    [['--dev', '--bogus'], {}, /Unknown option '--bogus'/],
    [['--dev', '--plugin-reads', 'my-cni'], {}, /--plugin-reads: invalid value "my-cni": expected TYPE=KEY/],
    [['--dev', '--plugin-reads', 'my-cni=mtu'], {}, /--plugin-reads: unsupported key "mtu" in "my-cni=mtu": one of mac, ips, guid/],
    [['--dev', '--enforcement', 'dryrun'], {}, /--enforcement: invalid value "dryrun": enforce or observe/],
    [['--dev', '--audit-rate', '0'], {}, /--audit-rate: invalid value "0"/],
    [['--dev', '--audit-rate', 'fast'], {}, /--audit-rate: invalid value "fast"/],
    [['--dev', '--multus-default-networks', '1.5'], {}, /--multus-default-networks: invalid value "1.5": a whole number/],
  ];
  for (const [argv, env, want] of cases) t.throws(() => parseServeArgs(argv, env, '/w', '/pkg'), want, argv.join(' '));
  const cli = io('/tmp');
  t.equal(await run(['--port', 'x', '--dev'], cli), 2);
  t.match(cli.err.join(''), /netattach serve: --port: invalid value "x"/);
  const help = io('/tmp');
  t.equal(await run(['--help'], help), 0);
  t.match(help.out.join(''), /NETATTACH_BODY_LIMIT \(4Mi\)/);
});

t.test('parseSize', async (t) => {
  const cases: Array<[string, number | undefined]> = [
    ['1024', 1024],
    ['4Mi', 4 << 20],
    ['4MiB', 4 << 20],
    ['64k', 65536],
    ['64 Ki', 65536],
    ['1.5Mi', undefined],
    ['-1', undefined],
    ['', undefined],
  ];
  for (const [text, want] of cases) t.equal(parseSize(text), want, text);
});

t.test('a policy file that cannot be read stops serve at start-up (never served without it)', async (t) => {
  const dir = t.testdir({ nads: {} });
  const cli = io(dir);
  t.equal(
    await run(
      ['--tls-dir', 'tls', '--nads', 'nads', '--policy', 'p.yaml', '--port', '0', '--health-port', '0', '--host', '127.0.0.1'],
      cli,
    ),
    2,
  );
  t.match(cli.err.join(''), /--policy .*p\.yaml: cannot read the file: ENOENT/);
});

t.test('--no-pod-watch and NETATTACH_NO_POD_WATCH', async (t) => {
  const on = parseServeArgs(['--tls-dir', 't'], {}, '/w', '/pkg');
  const off = parseServeArgs(['--tls-dir', 't', '--no-pod-watch'], {}, '/w', '/pkg');
  const env = parseServeArgs(['--tls-dir', 't'], { NETATTACH_NO_POD_WATCH: 'true' }, '/w', '/pkg');
  if (on === 'help' || off === 'help' || env === 'help') throw new Error('help');
  t.same([on.podWatch, off.podWatch, env.podWatch], [true, false, false]);
});

t.test('address claims: --namespace, the service account namespace file, --no-address-claims, --claim-pending', async (t) => {
  const dir = t.testdir({ sa: { namespace: 'netattach-system\n' } });
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const c = parseServeArgs(['--tls-dir', 't', ...argv], { NETATTACH_SERVICEACCOUNT_DIR: `${dir}/none`, ...env }, '/w', '/pkg');
    if (c === 'help') throw new Error('help');
    return c;
  };
  t.equal(parse([]).leaseNamespace, undefined, 'outside a pod, without --namespace: no claims');
  t.equal(parse([], { NETATTACH_SERVICEACCOUNT_DIR: `${dir}/sa` }).leaseNamespace, 'netattach-system', 'in a pod: its namespace');
  t.equal(parse(['--namespace', 'ops']).leaseNamespace, 'ops');
  t.equal(parse([], { NETATTACH_NAMESPACE: 'ops2' }).leaseNamespace, 'ops2');
  t.equal(parse(['--namespace', 'ops', '--no-address-claims']).leaseNamespace, undefined);
  t.equal(parse([], { NETATTACH_NAMESPACE: 'ops', NETATTACH_NO_ADDRESS_CLAIMS: 'true' }).leaseNamespace, undefined);
  t.throws(() => parse(['--namespace', 'Not_A_Namespace']), /--namespace: invalid value "Not_A_Namespace"/);
  t.equal(parse(['--namespace', 'ops', '--claims-namespace', 'ops-claims']).leaseNamespace, 'ops-claims', 'a namespace of their own');
  t.equal(
    parse([], { NETATTACH_SERVICEACCOUNT_DIR: `${dir}/sa`, NETATTACH_CLAIMS_NAMESPACE: 'netattach-claims' }).leaseNamespace,
    'netattach-claims',
  );
  t.equal(parse(['--claims-namespace', 'x', '--no-address-claims']).leaseNamespace, undefined);
  t.throws(() => parse(['--claims-namespace', 'Bad_NS']), /--claims-namespace: invalid value "Bad_NS"/);
  t.equal(parse([]).leasePendingMs, 35_000);
  t.equal(parse(['--claim-pending', '5s']).leasePendingMs, 5_000);
  t.throws(() => parse(['--claim-pending', '10ms']), /--claim-pending: invalid value "10ms"/);
});

t.test('--no-dra and NETATTACH_NO_DRA turn the DeviceClass/template watches off', async (t) => {
  const on = parseServeArgs(['--tls-dir', 't'], {}, '/w', '/pkg');
  const off = parseServeArgs(['--tls-dir', 't', '--no-dra'], {}, '/w', '/pkg');
  const env = parseServeArgs(['--tls-dir', 't'], { NETATTACH_NO_DRA: 'true' }, '/w', '/pkg');
  if (on === 'help' || off === 'help' || env === 'help') throw new Error('help');
  t.same([on.draWatch, off.draWatch, env.draWatch], [true, false, false]);
  t.throws(
    () => parseServeArgs(['--tls-dir', 't'], { NETATTACH_NO_DRA: 'maybe' }, '/w', '/pkg'),
    /NETATTACH_NO_DRA: invalid value "maybe"/,
  );
});

t.test('serve with --tls-dir generates a pair when absent and serves NADs from --nads', async (t) => {
  const dir = t.testdir({
    nads: {
      'a.yaml':
        'apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: net-a, namespace: default}\nspec: {config: \'{"cniVersion":"1.0.0","type":"macvlan"}\'}\n',
    },
  });
  const cli = io(dir);
  const serving = await startServe(
    ['--tls-dir', 'tls', '--nads', 'nads', '--port', '0', '--health-port', '0', '--host', '127.0.0.1', '--log-level', 'info'],
    cli,
  );
  if (serving === 'help') throw new Error('help');
  t.teardown(() => serving.server.close());
  t.equal(statSync(join(dir, 'tls', 'tls.key')).mode & 0o777, 0o600);
  const ca = readFileSync(join(dir, 'tls', 'ca.crt'), 'utf8');
  const lines = cli.out
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.ok(lines.some((l) => l.msg === 'generated a self-signed certificate (CA in ca.crt)'));
  t.ok(lines.some((l) => l.msg === 'NADs are read from files' && l.source === 'directory'));
  t.notOk(cli.out.join('').includes('PRIVATE KEY'));
  // The NADs really come from --nads: a pod selecting the file's NAD is admitted, another is not.
  // (This sent a pod without networks and checked only that `allowed` was a boolean.)
  await eventually(async () => serving.server.readiness().ready, Boolean, 'readiness');
  const send = async (networks: string) =>
    (
      await request(`${serving.url}/validate`, JSON.stringify(podReview({ annotations: { 'k8s.v1.cni.cncf.io/networks': networks } })), {
        ca,
      })
    ).json.response;
  const found = await send('net-a');
  t.equal(found.allowed, true, found.status?.message ?? 'net-a is read from nads/a.yaml');
  const missing = await send('net-b');
  t.equal(missing.allowed, false);
  t.match(missing.status?.message, 'Not found: "default/net-b"');
});

/** Runs `netattach serve` as a child process; resolves with its URLs once it is serving. */
function spawnServe(
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ child: ReturnType<typeof spawn>; url: string; output: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, join(ROOT, 'src/cli/main.ts'), 'serve', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolveStart, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(https:\/\/[^"]+)".*"msg":"netattach serving"/.exec(out);
      if (m) resolveStart({ child, url: m[1]!, output: () => out, exit });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    void exit.then((code) => reject(new Error(`serve exited with ${code} before serving:\n${out}`)));
  });
}

t.test('SIGTERM: the request in flight is answered, then the process exits 0', async (t) => {
  const dir = t.testdir({ nads: {} });
  const s = await spawnServe([
    '--tls-dir',
    join(dir, 'tls'),
    '--nads',
    join(dir, 'nads'),
    '--port',
    '0',
    '--health-port',
    '0',
    '--host',
    '127.0.0.1',
  ]);
  t.teardown(() => {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  });
  const ca = readFileSync(join(dir, 'tls', 'ca.crt'), 'utf8');
  const body = Buffer.from(JSON.stringify(podReview()));
  // `Expect: 100-continue`: the server says when it holds the request; then SIGTERM, and the rest
  // of the body only once the process logs that it is draining (polled, no fixed sleep).
  const response = new Promise<{ status: number; text: string }>((resolveRes, reject) => {
    const req = https.request(
      `${s.url}/validate`,
      {
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json', 'content-length': body.length, expect: '100-continue' },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolveRes({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.on('continue', () => {
      req.write(body.subarray(0, 50));
      s.child.kill('SIGTERM');
      eventually(
        async () => s.output(),
        (out) => /shutting down: draining requests/.test(out),
        'the drain log line',
      ).then(() => req.end(body.subarray(50)), reject);
    });
    req.flushHeaders();
  });
  const res = await response;
  t.equal(res.status, 200, 'in-flight request answered during the drain');
  t.match(JSON.parse(res.text), { response: { allowed: true } });
  t.equal(await s.exit, 0, 'exit code 0');
  t.match(s.output(), /shutting down: draining requests/);
  t.match(s.output(), /"drained":true/);
});

// Issue 38: the server's DRA view forwarded classesFor, template and templateNamespaces only, so a
// pod claim's template was never judged in a real server ("unchecked: netattach does not read
// templates here"), whatever the watches held. Every reader is forwarded, with its arguments.
t.test('draSourceOf forwards every DraView reader of the DRA watches', async (t) => {
  const calls: string[] = [];
  const seen = <T>(what: string, value: T): T => (calls.push(what), value);
  const cls = { name: 'c', extendedResourceName: 'example.com/r' };
  const devices = { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'c' }] }] };
  const source = draSourceOf({
    classesFor: (r) => seen(`classesFor ${r}`, [cls]),
    template: (ns, n) => seen(`template ${ns}/${n}`, { status: 'found' as const }),
    templateNamespaces: (n) => seen(`templateNamespaces ${n}`, ['a']),
    deviceClass: (n) => seen(`deviceClass ${n}`, cls),
    templateDevices: (ns, n) => seen(`templateDevices ${ns}/${n}`, devices),
    templates: { lookup: async (ns, n, ms) => seen(`lookup ${ns}/${n} ${ms}`, { status: 'not-found' as const }) },
  });
  const cases: Array<[string, () => unknown, unknown]> = [
    ['classesFor example.com/r', () => source.classesFor('example.com/r'), [cls]],
    ['template ns/t', () => source.template('ns', 't'), { status: 'found' }],
    ['templateNamespaces t', () => source.templateNamespaces?.('t'), ['a']],
    ['deviceClass c', () => source.deviceClass?.('c'), cls],
    ['templateDevices ns/t', () => source.templateDevices?.('ns', 't'), devices],
  ];
  for (const [what, call, want] of cases) {
    t.same(call(), want, what);
    t.equal(calls.at(-1), what, `${what}: asked of the watches`);
  }
  t.same(await source.lookup?.('ns', 't', 50), { status: 'not-found' });
  t.equal(calls.at(-1), 'lookup ns/t 50');
});

// Issue 39: what a serving process holds in its heap for good. yaml and node-forge are loaded on
// first use (src/yaml, src/certs/generate.ts), and Node's built-ins are taken with
// process.getBuiltinModule where an ES import would read node:http's lazy WebSocket export and so
// load undici. The probe, preloaded, prints the packages in the CommonJS cache (an ES import of a
// CommonJS package lands there too) and the built-ins loaded, on SIGUSR2.
const MODULE_PROBE = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
process.on('SIGUSR2', () => {
  const packages = [...new Set(Object.keys(require.cache).map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(p)?.[1]).filter(Boolean))];
  process.stderr.write('MODULES ' + JSON.stringify({ packages, builtins: process.moduleLoadList }) + '\\n');
});
`;

type Modules = { packages: string[]; builtins: string[] };

/**
 * The modules the server has loaded after answering a review. `until`: probe again (the NAD
 * directory is read in the background, so a review can be answered before its first scan) until
 * the modules satisfy it, a bounded number of times; the last probe is returned either way.
 */
async function loadedModules(t: Test, args: string[], dir: string, until?: (m: Modules) => boolean): Promise<Modules> {
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, MODULE_PROBE);
  const s = await spawnServe([...args, '--port', '0', '--health-port', '0', '--host', '127.0.0.1'], ['--import', probe]);
  t.teardown(() => {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  });
  const ca = readFileSync(join(dir, 'tls', 'ca.crt'), 'utf8');
  const answer = await request(`${s.url}/mutate`, JSON.stringify(podReview()), { ca });
  t.equal(answer.status, 200, 'a review answered first');
  let modules: Modules | undefined;
  for (let probe = 1; probe <= 50; probe++) {
    s.child.kill('SIGUSR2');
    const out = await eventually(
      async () => s.output(),
      (o) => (o.match(/MODULES .*\n/g)?.length ?? 0) >= probe,
      'the probe line',
    );
    const lines = out.match(/MODULES (.*)\n/g)!;
    modules = JSON.parse(lines[lines.length - 1]!.slice('MODULES '.length)) as Modules;
    if (!until || until(modules)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  s.child.kill('SIGTERM');
  await s.exit;
  return modules!;
}

t.test('a server with a mounted pair and JSON NAD files loads no yaml, node-forge or undici', async (t) => {
  const config = JSON.stringify({ cniVersion: '1.0.0', type: 'macvlan', master: 'eth0' });
  const nad = {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'net-a', namespace: 'default' },
    spec: { config },
  };
  const dir = t.testdir({
    lean: { nads: { 'a.json': JSON.stringify(nad) } },
    full: {
      nads: {
        'a.yaml': `apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: net-a, namespace: default}\nspec: {config: '${config}'}\n`,
      },
    },
  });
  const lean = join(dir, 'lean');
  await makeCerts(join(lean, 'tls'));
  const modules = await loadedModules(t, ['--tls-dir', join(lean, 'tls'), '--nads', join(lean, 'nads')], lean);
  t.ok(modules.packages.includes('fastify'), 'the probe sees the packages: fastify is there');
  t.notOk(modules.packages.includes('yaml'), 'no yaml');
  t.notOk(modules.packages.includes('node-forge'), 'no node-forge');
  t.notOk(modules.packages.includes('@kubernetes/client-node'), 'no @kubernetes/client-node');
  t.same(
    modules.builtins.filter((m) => m.includes('undici')),
    [],
    'no undici',
  );
  // The control: YAML files and no pair load both, so the probe can fail.
  const full = join(dir, 'full');
  const all = await loadedModules(t, ['--tls-dir', join(full, 'tls'), '--nads', join(full, 'nads')], full, (m) =>
    m.packages.includes('yaml'),
  );
  t.ok(all.packages.includes('yaml'), 'YAML NAD files: yaml loaded');
  t.ok(all.packages.includes('node-forge'), 'a pair generated: node-forge loaded');
});
