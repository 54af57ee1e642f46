// `netattach serve`: the admission webhook. Flags (or NETATTACH_* variables) become ServerOptions;
// this module wires certificates, the NAD source and the server, then waits for SIGTERM/SIGINT.
import { parseArgs } from 'node:util';
import { access, constants } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { EXIT_OK, EXIT_USAGE, type CliIO } from './io.js';
import { generateCertificates, writeCertificateSet, readCa, checkKeyPair, CERT_FILES } from '../certs/index.js';
import {
  createServer,
  createLogger,
  LOG_LEVELS,
  parseGoDuration,
  type LogLevel,
  type ServerOptions,
  type WebhookServer,
} from '../server/index.js';
import { createNadSource, parsePluginReads, tryLoadKubeConfig, type NadSource } from '../nads/index.js';
import { kubeconfigErrorText } from './kubeconfig.js';
import { getObject, kubeconfigCredentials, kubeTransport, serviceAccountNamespace, type KubeCredentials } from '../kube/index.js';
import { DEFAULT_ADMISSION_CONFIG, parseMultusDefaultNetworks, ENFORCEMENT_MODES, type Enforcement } from '../admission/index.js';
import { parseSharingOwners, leaseSweepMs, DEFAULT_LEASE_PENDING_MS } from '../policy/index.js';
import { wirePolicy, type PolicyWiring } from './serve-policy.js';
import { ClusterDra } from '../dra/index.js';
import { ClusterBindingRegistry, type BindingPlugins } from '../kubevirt/index.js';
import type { BackgroundTask, DraSource } from '../server/index.js';

const MiB = 1024 * 1024;
export const DEFAULT_BODY_LIMIT = 4 * MiB;

const HELP = `Usage: netattach serve [options]

Runs the admission webhook: POST /mutate and /validate over HTTPS; /healthz, /readyz and
/metrics over plain HTTP on the health port. Every option can also be set with the
environment variable shown (the flag wins).

Options:
  --port N                       HTTPS port                        NETATTACH_PORT (8443)
  --health-port N                health/metrics port (plain HTTP)  NETATTACH_HEALTH_PORT (8080)
  --host ADDR                    listen address                    NETATTACH_HOST (0.0.0.0; 127.0.0.1 with --dev)
  --tls-dir DIR                  tls.crt + tls.key (a TLS Secret mount); a self-signed
                                 pair is generated when absent and DIR is writable
                                                                   NETATTACH_TLS_DIR
  --tls-cert FILE, --tls-key FILE  serving certificate and key     NETATTACH_TLS_CERT, NETATTACH_TLS_KEY
  --client-ca FILE               require client certificates signed by these CAs
                                                                   NETATTACH_CLIENT_CA
  --nads DIR                     read NADs from YAML/JSON files instead of the cluster
                                                                   NETATTACH_NADS
  --kubeconfig FILE              cluster configuration             KUBECONFIG (else ~/.kube/config, else in-cluster)
  --log-level LEVEL              fatal|error|warn|info|debug|trace|silent
                                                                   NETATTACH_LOG_LEVEL (info)
  --default-network-namespace NS namespace of unqualified default networks
                                                                   NETATTACH_DEFAULT_NETWORK_NAMESPACE (kube-system)
  --podnetinfo                   add the podnetinfo Downward API volume
                                                                   NETATTACH_PODNETINFO (false)
  --hugepages-downward-api       add each container's hugepages to that volume and
                                 CONTAINER_NAME to the container, as NRI's
                                 -injectHugepageDownApi (implies the volume)
                                                                   NETATTACH_HUGEPAGES_DOWNWARD_API (false)
  --resource-name-key KEY        extra NAD annotation read for resource names (repeatable;
                                 k8s.v1.cni.cncf.io/resourceName is always read)
                                                                   NETATTACH_RESOURCE_NAME_KEYS (comma-separated)
  --plugin-reads TYPE=KEYS       a CNI plugin or IPAM type that reads mac, ips (CNI_ARGS or
                                 args.cni) or guid (args.cni), beyond the built-in table; repeatable
                                                                   NETATTACH_PLUGIN_READS (';'-separated)
  --address-sharing-owner GROUP/KIND  an owner whose pods share their MACs and GUIDs (pods it
                                 moves, such as a VM's migration target); repeatable, replaces
                                 the default             NETATTACH_ADDRESS_SHARING_OWNERS (kubevirt.io/VirtualMachineInstance)
  --multus-default-networks N    how many defaultNetworks Multus's config adds before a pod's
                                 networks (they shift the net<N> interface names); unset, an
                                 interface named as Multus names another element is warned,
                                 not denied (the manifests state 0, Multus's default)
                                                                   NETATTACH_MULTUS_DEFAULT_NETWORKS (unset)
  --immutable-networks           refuse any change of a running pod's network annotations
                                 (default: validate the change, as for hotplug)
                                                                   NETATTACH_IMMUTABLE_NETWORKS (false)
  --body-limit SIZE              largest request body (bytes, or Ki/Mi suffix)
                                                                   NETATTACH_BODY_LIMIT (4Mi)
  --shutdown-grace DURATION      time to drain requests on SIGTERM NETATTACH_SHUTDOWN_GRACE (20s)
  --policy FILE                  NetworkAttachmentPolicy documents (watched); without it,
                                 policies come from the cluster (the CRD) when NADs do
                                                                   NETATTACH_POLICY
  --no-pod-watch                 do not watch pods: uniqueness only among pods admitted in
                                 the last 45 s, no "NAD still in use" warnings, no audit
                                                                   NETATTACH_NO_POD_WATCH (false)
  --namespace NS                 netattach's own namespace: unique addresses are claimed there
                                 (Leases), so uniqueness holds across replicas
                                                                   NETATTACH_NAMESPACE (the service
                                 account's namespace in a pod; else no claims)
  --claims-namespace NS          claim in NS instead: a namespace holding nothing but the claims,
                                 so that netattach's right to delete Leases reaches no other
                                 Lease (the manifests: netattach-claims)
                                                                   NETATTACH_CLAIMS_NAMESPACE (--namespace)
  --no-address-claims            judge uniqueness in this replica only (no Leases)
                                                                   NETATTACH_NO_ADDRESS_CLAIMS (false)
  --claim-pending DURATION       how long a claim whose pod has not appeared blocks other pods;
                                 then it yields to the next and is swept (swept every half of it)
                                                                   NETATTACH_CLAIM_PENDING (35s)
  --enforcement MODE             enforce, or observe: deny nothing, admit would-be denials
                                 with warnings, log and count them (roll-out)
                                                                   NETATTACH_ENFORCEMENT (enforce)
  --no-audit                     no background audit of live pods and NADs (cluster mode)
                                                                   NETATTACH_NO_AUDIT (false)
  --audit-rate N                 live pods and NADs judged per second at most by the audit
                                                                   NETATTACH_AUDIT_RATE (1000)
  --no-dra                       do not watch DeviceClasses and ResourceClaimTemplates (clusters
                                 without resource.k8s.io/v1; see docs/dra.md)
  --dev                          development: certificates in certs/ (generated when absent),
                                 example NADs when no cluster is reachable, 127.0.0.1
                                                                   NETATTACH_DEV
  -h, --help                     show this help
`;

/**
 * On SIGTERM, answers end their connections until no review has come for this long; only then are
 * idle connections closed (server.ts, close()): a second is far beyond the API server's gap between
 * reviews on a busy connection, and keeps a roll's drain short.
 */
const DRAIN_QUIET_MS = 1000;

export interface ServeConfig {
  server: ServerOptions;
  /** Generate a pair into this directory when absent (--tls-dir or --dev). */
  generateTlsIn?: string;
  nadsDir?: string;
  kubeconfig?: string;
  logLevel: LogLevel;
  dev: boolean;
  /** Watch pods (cluster mode) for the uniqueness index and NAD usage. */
  podWatch: boolean;
  /** Where address Leases are made (--claims-namespace, else --namespace), unless --no-address-claims. */
  leaseNamespace?: string;
  /** --claim-pending, ms. */
  leasePendingMs: number;
  /** Background audit of live pods (cluster mode, with the pod watch). */
  audit: { enabled: boolean; podsPerSecond: number };
  /** Watch DeviceClasses and ResourceClaimTemplates (cluster mode). */
  draWatch: boolean;
}

const STRING_OPTIONS = [
  'port',
  'health-port',
  'host',
  'tls-dir',
  'tls-cert',
  'tls-key',
  'client-ca',
  'nads',
  'kubeconfig',
  'log-level',
  'default-network-namespace',
  'body-limit',
  'shutdown-grace',
  'policy',
  'namespace',
  'claims-namespace',
  'claim-pending',
  'enforcement',
  'audit-rate',
  'multus-default-networks',
] as const;

const envName = (flag: string): string => `NETATTACH_${flag.toUpperCase().replace(/-/g, '_')}`;

function port(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535)
    throw new RangeError(`--${name}: invalid value ${JSON.stringify(text)}: must be a port number 0-65535`);
  return n;
}

export function parseSize(text: string): number | undefined {
  const m = /^(\d+)\s*(|k|ki|kib|m|mi|mib)$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2]!.toLowerCase();
  return Number(m[1]) * (unit.startsWith('m') ? MiB : unit.startsWith('k') ? 1024 : 1);
}

function flagBool(name: string, text: string | undefined): boolean {
  if (text === undefined || text === '') return false;
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new RangeError(`${envName(name)}: invalid value ${JSON.stringify(text)}: must be true or false`);
}

/** Flags and environment to a configuration; throws a RangeError naming the bad option. */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv, cwd: string, packageRoot: string): ServeConfig | 'help' {
  const options = Object.fromEntries(STRING_OPTIONS.map((o) => [o, { type: 'string' as const }]));
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      ...options,
      'resource-name-key': { type: 'string', multiple: true },
      'plugin-reads': { type: 'string', multiple: true },
      'address-sharing-owner': { type: 'string', multiple: true },
      'immutable-networks': { type: 'boolean' },
      podnetinfo: { type: 'boolean' },
      'hugepages-downward-api': { type: 'boolean' },
      'no-pod-watch': { type: 'boolean' },
      'no-address-claims': { type: 'boolean' },
      'no-audit': { type: 'boolean' },
      'no-dra': { type: 'boolean' },
      dev: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const get = (name: (typeof STRING_OPTIONS)[number]): string | undefined => {
    const v = (values as Record<string, string | undefined>)[name] ?? env[envName(name)];
    return v === '' ? undefined : v;
  };
  const dev = values.dev ?? flagBool('dev', env.NETATTACH_DEV);
  const logLevel = (get('log-level') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new RangeError(`--log-level: unsupported value ${JSON.stringify(logLevel)}: one of ${LOG_LEVELS.join(', ')}`);

  const bodyText = get('body-limit');
  const bodyLimit = bodyText === undefined ? DEFAULT_BODY_LIMIT : parseSize(bodyText);
  if (bodyLimit === undefined || bodyLimit < 1024)
    throw new RangeError(`--body-limit: invalid value ${JSON.stringify(bodyText)}: a size of at least 1024 bytes, e.g. 4Mi`);
  const graceText = get('shutdown-grace');
  const grace = graceText === undefined ? 20_000 : parseGoDuration(graceText);
  if (grace === undefined) throw new RangeError(`--shutdown-grace: invalid value ${JSON.stringify(graceText)}: a duration such as 20s`);

  const tlsCert = get('tls-cert');
  const tlsKey = get('tls-key');
  let tlsDir = get('tls-dir');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new RangeError('--tls-cert and --tls-key go together');
  if (tlsCert !== undefined && tlsDir !== undefined) throw new RangeError('--tls-dir and --tls-cert/--tls-key are alternatives: give one');
  if (tlsCert === undefined && tlsDir === undefined) {
    if (!dev) throw new RangeError('no certificate: give --tls-dir DIR (tls.crt, tls.key) or --tls-cert FILE --tls-key FILE (or --dev)');
    tlsDir = join(packageRoot, 'certs');
  }
  const abs = (p: string) => resolve(cwd, p);
  const clientCa = get('client-ca');
  const extraKeys =
    values['resource-name-key'] ??
    (env.NETATTACH_RESOURCE_NAME_KEYS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  const pluginReads = parsePluginReads(
    values['plugin-reads'] ??
      (env.NETATTACH_PLUGIN_READS ?? '')
        .split(';')
        .map((k) => k.trim())
        .filter(Boolean),
  );
  const ownerFlags =
    values['address-sharing-owner'] ??
    (env.NETATTACH_ADDRESS_SHARING_OWNERS !== undefined
      ? env.NETATTACH_ADDRESS_SHARING_OWNERS.split(',')
          .map((k) => k.trim())
          .filter(Boolean)
      : undefined);
  const addressSharingOwners = ownerFlags ? parseSharingOwners(ownerFlags) : [...DEFAULT_ADMISSION_CONFIG.addressSharingOwners];
  const nads = get('nads');
  const kubeconfig = get('kubeconfig');
  const policy = get('policy');
  const noClaims = values['no-address-claims'] ?? flagBool('no-address-claims', env.NETATTACH_NO_ADDRESS_CLAIMS);
  const claimsFlag = get('claims-namespace') !== undefined ? 'claims-namespace' : 'namespace';
  const leaseNamespace = noClaims ? undefined : (get('claims-namespace') ?? get('namespace') ?? serviceAccountNamespace(env));
  const pendingText = get('claim-pending');
  const leasePendingMs = pendingText === undefined ? DEFAULT_LEASE_PENDING_MS : parseGoDuration(pendingText);
  if (leasePendingMs === undefined || leasePendingMs < 1000)
    throw new RangeError(`--claim-pending: invalid value ${JSON.stringify(pendingText)}: a duration of at least 1s, e.g. 35s`);
  if (leaseNamespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(leaseNamespace)) {
    throw new RangeError(`--${claimsFlag}: invalid value ${JSON.stringify(leaseNamespace)}: must be a namespace name (RFC 1123 label)`);
  }
  const enforcement = get('enforcement') ?? 'enforce';
  if (!ENFORCEMENT_MODES.includes(enforcement as Enforcement))
    throw new RangeError(`--enforcement: invalid value ${JSON.stringify(enforcement)}: enforce or observe`);
  const multusDefaultNetworks = parseMultusDefaultNetworks(get('multus-default-networks'));
  const rateText = get('audit-rate') ?? '1000';
  const podsPerSecond = Number(rateText);
  if (!/^\d+$/.test(rateText) || podsPerSecond < 1)
    throw new RangeError(`--audit-rate: invalid value ${JSON.stringify(rateText)}: a whole number of pods per second, at least 1`);

  return {
    dev,
    logLevel,
    podWatch: !(values['no-pod-watch'] ?? flagBool('no-pod-watch', env.NETATTACH_NO_POD_WATCH)),
    ...(leaseNamespace !== undefined ? { leaseNamespace } : {}),
    leasePendingMs,
    audit: { enabled: !(values['no-audit'] ?? flagBool('no-audit', env.NETATTACH_NO_AUDIT)), podsPerSecond },
    draWatch: !(values['no-dra'] ?? flagBool('no-dra', env.NETATTACH_NO_DRA)),
    generateTlsIn: tlsDir !== undefined ? abs(tlsDir) : undefined,
    nadsDir: nads !== undefined ? abs(nads) : undefined,
    kubeconfig: kubeconfig !== undefined ? abs(kubeconfig) : undefined,
    server: {
      host: get('host') ?? (dev ? '127.0.0.1' : '0.0.0.0'),
      port: port('port', get('port') ?? '8443'),
      healthPort: port('health-port', get('health-port') ?? '8080'),
      tls: {
        certFile: tlsDir !== undefined ? join(abs(tlsDir), CERT_FILES.cert) : abs(tlsCert!),
        keyFile: tlsDir !== undefined ? join(abs(tlsDir), CERT_FILES.key) : abs(tlsKey!),
        clientCaFile: clientCa !== undefined ? abs(clientCa) : undefined,
      },
      bodyLimit,
      shutdownGraceMs: grace,
      drainQuietMs: DRAIN_QUIET_MS,
      policyFile: policy !== undefined ? abs(policy) : undefined,
      enforcement: enforcement as Enforcement,
      admission: {
        defaultNetworkNamespace: get('default-network-namespace') ?? DEFAULT_ADMISSION_CONFIG.defaultNetworkNamespace,
        resourceNameKeys: [...new Set([...DEFAULT_ADMISSION_CONFIG.resourceNameKeys, ...extraKeys])],
        podNetInfo: {
          ...DEFAULT_ADMISSION_CONFIG.podNetInfo,
          enabled: values.podnetinfo ?? flagBool('podnetinfo', env.NETATTACH_PODNETINFO),
          hugepages: values['hugepages-downward-api'] ?? flagBool('hugepages-downward-api', env.NETATTACH_HUGEPAGES_DOWNWARD_API),
        },
        pluginReads,
        addressSharingOwners,
        immutableNetworks: values['immutable-networks'] ?? flagBool('immutable-networks', env.NETATTACH_IMMUTABLE_NETWORKS),
        ...(multusDefaultNetworks !== undefined && { multusDefaultNetworks }),
      },
    },
  };
}

/** The namespace of the pod's service account (the kubelet mounts it), when running in a pod. */
/** The directory holding package.json (certs/ and examples/ live there), from src/ or dist/src/. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json'))) {
      try {
        if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'netattach') return dir;
      } catch {
        // not ours; keep looking
      }
    }
    dir = dirname(dir);
  }
  return process.cwd();
}

/** Generates a self-signed pair in `dir` when tls.crt/tls.key are missing (or, in dev, unusable). */
async function ensureCertificates(config: ServeConfig, logger: Logger): Promise<void> {
  const dir = config.generateTlsIn;
  if (!dir) return;
  const { certFile, keyFile } = config.server.tls;
  const present = existsSync(certFile) && existsSync(keyFile);
  if (present) {
    const check = checkKeyPair(readFileSync(certFile), readFileSync(keyFile));
    if (check.ok || !config.dev) return;
    logger.warn({ dir, problem: check.error }, 'development certificate unusable; generating a new one');
  } else {
    const writable = await access(existsSync(dir) ? dir : dirname(dir), constants.W_OK).then(
      () => true,
      () => false,
    );
    if (!writable) return; // loading fails with a clear "cannot read" message
  }
  const set = generateCertificates({
    service: 'netattach',
    namespace: 'netattach-system',
    sans: ['localhost', '127.0.0.1', '::1'],
    ca: await readCa(dir),
  });
  await writeCertificateSet(dir, set);
  logger.warn(
    { dir, sans: 'netattach.netattach-system.svc, localhost, 127.0.0.1, ::1' },
    'generated a self-signed certificate (CA in ca.crt)',
  );
}

/** Is the cluster answering? (dev mode only: decides between the cluster and example NADs). */
async function clusterReachable(kc: KubeCredentials, ms = 2000): Promise<boolean> {
  return (await getObject(kubeTransport(kc), '/version', { timeoutMs: ms })).status === 'ok';
}

/** The NAD source, and the cluster when it is read (cluster mode: policies, namespaces, pods too). */
async function chooseNadSource(
  config: ServeConfig,
  root: string,
  logger: Logger,
): Promise<{ nadSource: NadSource; kubeConfig?: KubeCredentials }> {
  const common = { logger, resourceNameKeys: config.server.admission.resourceNameKeys };
  if (config.nadsDir) {
    logger.info({ source: 'directory', dir: config.nadsDir }, 'NADs are read from files');
    return { nadSource: createNadSource({ ...common, dir: config.nadsDir })! };
  }
  const kc = config.kubeconfig
    ? await kubeconfigCredentials([config.kubeconfig]).catch((e: unknown) => {
        // Said without the file's text (kubeconfigErrorText): a parser's message would quote its token.
        throw new RangeError(`--kubeconfig ${config.kubeconfig}: ${kubeconfigErrorText(e)}`);
      })
    : await tryLoadKubeConfig({ env: process.env });
  if (kc && (!config.dev || (await clusterReachable(kc)))) {
    logger.info({ source: 'cluster', server: kc.server, credentials: kc.source }, 'NADs are read from the cluster');
    return { nadSource: createNadSource({ ...common, kubeConfig: kc })!, kubeConfig: kc };
  }
  if (config.dev) {
    const dir = join(root, 'examples', 'nads');
    logger.warn(
      { source: 'directory', dir, reason: kc ? 'cluster not reachable' : 'no kubeconfig' },
      'development: NADs are read from the examples',
    );
    return { nadSource: createNadSource({ ...common, dir })! };
  }
  throw new RangeError(
    'no NAD source: no cluster configuration found (KUBECONFIG, ~/.kube/config, in-cluster); give --kubeconfig FILE or --nads DIR',
  );
}

/**
 * DeviceClasses and ResourceClaimTemplates. Not a readiness gate: until they are read, template
 * checks only warn ("unchecked"), and the Leases netattach adds depend on the NADs alone.
 */
function wireDra(kc: KubeCredentials, logger: Logger): { source: DraSource; task: BackgroundTask } {
  const dra = new ClusterDra(kc, { logger });
  return {
    source: draSourceOf(dra),
    task: { name: 'DRA watch (DeviceClasses, ResourceClaimTemplates)', start: () => dra.start(), stop: () => dra.stop() },
  };
}

/**
 * KubeVirt's binding plugin registry (docs/kubevirt.md). Not a readiness gate, and no failure: until
 * it is read, or where KubeVirt is not installed, a VM's binding interfaces are only noted.
 */
function wireKubevirt(kc: KubeCredentials, logger: Logger): { bindings: () => BindingPlugins | undefined; task: BackgroundTask } {
  const registry = new ClusterBindingRegistry(kc, { logger });
  return {
    bindings: () => {
      const r = registry.registry();
      return r.known ? r.plugins : undefined;
    },
    task: {
      name: 'KubeVirt watch (binding plugins)',
      // Not awaited by the server: without KubeVirt the first list never comes, and nothing waits.
      start: () =>
        registry.start().then(() => {
          const r = registry.registry();
          logger.info(
            { bindings: r.known ? `read from ${r.from}: ${Object.keys(r.plugins).length} plugins` : r.reason },
            'KubeVirt binding plugins',
          );
        }),
      stop: () => registry.stop(),
    },
  };
}

/**
 * The server's view of the DRA watches: every DraView reader. Without deviceClass and
 * templateDevices, a pod claim's template could never be judged (networkClaims, own claims):
 * always "unchecked" in the server, whatever the watches held.
 */
export function draSourceOf(
  dra: Pick<ClusterDra, 'classesFor' | 'template' | 'templateNamespaces' | 'deviceClass' | 'templateDevices'> & {
    templates: Pick<ClusterDra['templates'], 'lookup'>;
  },
): DraSource {
  return {
    classesFor: (r) => dra.classesFor(r),
    template: (ns, name) => dra.template(ns, name),
    templateNamespaces: (name) => dra.templateNamespaces(name),
    deviceClass: (name) => dra.deviceClass(name),
    templateDevices: (ns, name) => dra.templateDevices(ns, name),
    lookup: (ns, name, ms) => dra.templates.lookup(ns, name, ms),
  };
}

export interface Serving {
  server: WebhookServer;
  policy: PolicyWiring;
  url: string;
  healthUrl: string;
  logger: Logger;
  config: ServeConfig;
}

/** Starts serving (without signal handling): for `run` and for tests. */
export async function startServe(argv: string[], io: CliIO): Promise<Serving | 'help'> {
  const root = packageRoot();
  const config = parseServeArgs(argv, io.env, io.cwd, root);
  if (config === 'help') return 'help';
  const stream = new Writable({ write: (chunk, _enc, cb) => (io.stdout(String(chunk)), cb()) });
  const logger = createLogger(config.logLevel, stream);
  await ensureCertificates(config, logger);
  const { nadSource, kubeConfig } = await chooseNadSource(config, root, logger);
  // Built before the policy wiring: the background audit reads the templates the webhook reads.
  const dra = kubeConfig && config.draWatch ? wireDra(kubeConfig, logger) : undefined;
  const kubevirt = kubeConfig ? wireKubevirt(kubeConfig, logger) : undefined;
  const policy = await wirePolicy({
    ...(config.server.policyFile ? { policyFile: config.server.policyFile } : {}),
    ...(kubeConfig ? { kubeConfig } : {}),
    podWatch: config.podWatch,
    ...(config.leaseNamespace ? { leaseNamespace: config.leaseNamespace } : {}),
    leasePendingMs: config.leasePendingMs,
    leaseSweepMs: leaseSweepMs(config.leasePendingMs),
    defaultNetworkNamespace: config.server.admission.defaultNetworkNamespace,
    sharingOwners: config.server.admission.addressSharingOwners,
    logger,
    ...(config.audit.enabled
      ? {
          audit: {
            nadSource,
            config: config.server.admission,
            podsPerSecond: config.audit.podsPerSecond,
            ...(dra ? { dra: dra.source } : {}),
          },
        }
      : {}),
  });
  logger.info(policy.summary, kubeConfig ? 'policies: cluster mode' : 'policies: offline mode');
  let server: WebhookServer;
  try {
    const background = [...policy.deps.background, ...(dra ? [dra.task] : []), ...(kubevirt ? [kubevirt.task] : [])];
    server = await createServer(config.server, {
      nadSource,
      logger,
      ...policy.deps,
      background,
      ...(dra ? { dra: dra.source } : {}),
      ...(kubevirt ? { kubevirtBindings: kubevirt.bindings } : {}),
    });
  } catch (err) {
    // The policy file is already watched: stop that so a failed start does not keep the process alive.
    await Promise.all(policy.deps.background.map((task) => task.stop()));
    throw err;
  }
  const { url, healthUrl } = await server.listen();
  const { tls } = config.server;
  logger.info(
    {
      url,
      healthUrl,
      serial: server.servingSerial(),
      certFile: tls.certFile,
      clientCa: tls.clientCaFile ?? null,
      nads: nadSource.kind,
      dev: config.dev,
      enforcement: config.server.enforcement,
    },
    'netattach serving',
  );
  if (config.server.enforcement === 'observe')
    logger.warn(
      { enforcement: 'observe' },
      'observe mode: nothing is denied; would-be denials are admitted with warnings, logged and counted',
    );
  return { server, policy, url, healthUrl, logger, config };
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let serving: Serving | 'help';
  try {
    serving = await startServe(argv, io);
  } catch (err) {
    io.stderr(`netattach serve: ${(err as Error).message}\n`);
    return err instanceof RangeError || (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') ? EXIT_USAGE : 1;
  }
  if (serving === 'help') {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const { server, logger } = serving;
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal, graceMs: serving.config.server.shutdownGraceMs }, 'shutting down: draining requests');
  const { drained } = await server.close();
  logger.info({ drained }, 'stopped');
  return drained ? EXIT_OK : 1;
}
