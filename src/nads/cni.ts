// Reading a NAD's `spec.config`: a CNI network configuration (object with `type`) or a
// configuration list (object with `plugins` and no `type`: Multus's reading, see isPluginList). One pass yields both the summary the cache
// keeps (plugin types, declared capabilities) and the field errors/warnings the NAD validator
// reports. Rules follow the CNI SPEC and libcni; where Multus is laxer, see docs/nads.md.
import { jsonShapeProblem } from '../json/index.js';
import { child, index, invalid, required, unsupported, type FieldError } from '../field/index.js';
import { jsonErrorOffset, withoutQuotedText } from './json-position.js';
import { CREATES_INTERFACE, PLUGIN_FACTS, SINGLE_INSTANCE_PLUGINS } from './plugins.js';
import type { Capability, CniSummary, IpamRoute, IpamSummary, IpRange, PluginSummary } from './types.js';

export const KNOWN_CNI_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;

// CNI SPEC: "Must start with an alphanumeric character, optionally followed by any combination
// of one or more alphanumeric characters, underscore, dot or hyphen"; libcni rejects others.
const CNI_NETWORK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

// Plugins that create the attachment's interface: a chain has one (the plugin table, plugins.ts).
const INTERFACE_PLUGINS = CREATES_INTERFACE;

export interface CniAnalysis {
  /** Undefined when the config is empty, not JSON, or neither a config nor a list. */
  summary?: CniSummary;
  /**
   * Why Multus cannot load the config at all (GetCNIConfigFromSpec decodes it as a JSON object):
   * not JSON, or JSON that is not an object. Every ADD on it fails.
   */
  unloadable?: string;
  errors: FieldError[];
  warnings: FieldError[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Far beyond any CNI configuration (a conflist is a handful of plugins a few levels deep). */
export const CNI_SHAPE = { maxDepth: 64, maxContainers: 50_000 } as const;

/** Analyses `spec.config`; `path` is where the config sits in the NAD (default `spec.config`). */
export function analyzeCniConfig(text: string, path = 'spec.config'): CniAnalysis {
  const errors: FieldError[] = [];
  const warnings: FieldError[] = [];
  if (text === '') return { errors, warnings };

  // Checked before parsing: this text is the user's, inside an AdmissionReview whose own shape
  // check cannot see into strings.
  const shape = jsonShapeProblem(text, CNI_SHAPE);
  if (shape) {
    errors.push(invalid(path, text, `${shape}: not a CNI configuration`));
    return { errors, warnings };
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (e) {
    const reason = jsonSyntaxReason(text, e);
    errors.push(invalid(path, text, reason));
    return { errors, warnings, unloadable: reason };
  }
  if (!isObject(config)) {
    errors.push(invalid(path, text, 'must be a JSON object: a CNI network configuration or configuration list'));
    // JSON null decodes into Go's nil map without an error: what Multus then does is not judged.
    return config === null
      ? { errors, warnings }
      : { errors, warnings, unloadable: `not a JSON object but ${Array.isArray(config) ? 'an array' : `a ${typeof config}`}` };
  }

  checkNetworkName(config, path, errors);
  const cniVersion = checkCniVersion(config, path, errors, warnings);
  const capabilities = new Set<Capability | string>();
  const pluginTypes: string[] = [];
  const plugins: PluginSummary[] = [];
  const addPlugin = (plugin: Json, type: string | undefined, caps: string[], pluginPath: string): void => {
    for (const c of caps) capabilities.add(c);
    if (type === undefined) return;
    pluginTypes.push(type);
    const summary: PluginSummary = { type, capabilities: caps, path: pluginPath };
    const ipam = ipamSummary(plugin.ipam, plugin.args);
    if (ipam) summary.ipam = ipam;
    const refusesIps = PLUGIN_FACTS.get(type)?.refusesIps?.(plugin);
    if (refusesIps) summary.refusesIps = refusesIps;
    plugins.push(summary);
  };

  if (isPluginList(config)) {
    const plugins = config.plugins;
    const pluginsPath = child(path, 'plugins');
    if (!Array.isArray(plugins)) {
      errors.push(invalid(pluginsPath, plugins, 'must be a list of plugin configuration objects'));
      return { errors, warnings };
    }
    if (plugins.length === 0) {
      errors.push(required(pluginsPath, 'a configuration list needs at least one plugin'));
      return { errors, warnings };
    }
    plugins.forEach((plugin, i) => {
      const pluginPath = index(pluginsPath, i);
      if (!isObject(plugin)) {
        errors.push(invalid(pluginPath, plugin, 'must be a plugin configuration object'));
        return;
      }
      addPlugin(plugin, checkPluginType(plugin, pluginPath, errors), checkCapabilities(plugin, pluginPath, errors), pluginPath);
    });
    checkRepeats(plugins, pluginsPath, warnings);
    if (cniVersion !== undefined && plugins.length > 1 && (cniVersion === '0.1.0' || cniVersion === '0.2.0')) {
      warnings.push(invalid(child(path, 'cniVersion'), cniVersion, 'plugin chaining needs cniVersion 0.3.0 or later'));
    }
  } else {
    if (!Object.hasOwn(config, 'type')) {
      errors.push(required(child(path, 'type'), "a CNI network configuration needs 'type' (or 'plugins' for a configuration list)"));
      return { errors, warnings };
    }
    if (Object.hasOwn(config, 'plugins')) {
      warnings.push(
        invalid(
          child(path, 'plugins'),
          config.plugins,
          `ignored: with a top-level 'type' Multus runs that plugin alone; remove 'type' to run the list`,
        ),
      );
    }
    addPlugin(config, checkPluginType(config, path, errors), checkCapabilities(config, path, errors), path);
  }

  const summary: CniSummary = { pluginTypes, capabilities, plugins };
  if (cniVersion !== undefined) summary.cniVersion = cniVersion;
  return { summary, errors, warnings };
}

/**
 * Whether Multus runs `config` as a configuration list: only when it has no `type` (pkg/types/
 * conf.go LoadDelegateNetConf reads a list when the decoded Type is "", as JSON null decodes). With a `type`, the
 * top-level config runs alone and `plugins` is ignored, whatever the CNI SPEC says of the shape.
 */
const isPluginList = (config: Json): boolean =>
  Object.hasOwn(config, 'plugins') && (config.type === undefined || config.type === null || config.type === '');

/** The cache's view of `spec.config`: undefined when empty (read from the node) or unreadable. */
export function summarizeCniConfig(config: string): CniSummary | undefined {
  return analyzeCniConfig(config).summary;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function ipRange(r: unknown, set: number): IpRange | undefined {
  if (!isObject(r)) return undefined;
  const subnet = str(r.subnet);
  if (subnet === undefined) return undefined;
  const range: IpRange = { subnet, set };
  const start = str(r.rangeStart);
  const end = str(r.rangeEnd);
  const gateway = str(r.gateway);
  if (start) range.rangeStart = start;
  if (end) range.rangeEnd = end;
  if (gateway) range.gateway = gateway;
  return range;
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

function staticParts(ipam: Json, summary: IpamSummary): void {
  const addresses = Array.isArray(ipam.addresses)
    ? ipam.addresses.flatMap((a) => (isObject(a) && typeof a.address === 'string' ? [a.address] : []))
    : [];
  if (addresses.length) summary.addresses = addresses;
  const routes: IpamRoute[] = [];
  if (Array.isArray(ipam.routes)) {
    for (const r of ipam.routes) {
      // A route into another table or scope is left out: the kernel judges its gateway otherwise.
      if (!isObject(r) || r.table !== undefined || r.scope !== undefined) continue;
      const dst = str(r.dst);
      if (dst === undefined) continue;
      const gw = str(r.gw);
      routes.push(gw ? { dst, gw } : { dst });
    }
  }
  if (routes.length) summary.routes = routes;
  // static reads `"gateway": ""` as no gateway (net.IP's UnmarshalText; executed), as gatewayless.
  const gateways = Array.isArray(ipam.addresses)
    ? ipam.addresses.flatMap((a) => {
        const gateway = isObject(a) ? str(a.gateway) : undefined;
        return gateway === undefined ? [] : [gateway];
      })
    : [];
  if (gateways.length) summary.gateways = gateways;
  const bare = Array.isArray(ipam.addresses)
    ? ipam.addresses.flatMap((a) => (isObject(a) && typeof a.address === 'string' && str(a.gateway) === undefined ? [a.address] : []))
    : [];
  if (bare.length) summary.gatewaylessAddresses = bare;
}

/** Destinations of the routes without a gateway, whatever their table or scope (what may reach a default-route gateway). */
function gatewaylessRoutes(ipam: Json, summary: IpamSummary): void {
  if (!Array.isArray(ipam.routes)) return;
  const dsts = ipam.routes.flatMap((r) => (isObject(r) && typeof r.dst === 'string' && str(r.gw) === undefined ? [r.dst] : []));
  if (dsts.length) summary.gatewaylessRoutes = dsts;
}

/**
 * The IPAM type and what admission needs to predict its ADD: host-local's ranges, static's
 * addresses and routes, and the plugin's own args.cni.ips (read by both).
 */
function ipamSummary(ipam: unknown, args: unknown): IpamSummary | undefined {
  if (!isObject(ipam)) return undefined;
  const type = str(ipam.type);
  if (type === undefined) return undefined;
  const summary: IpamSummary = { type };
  if (type === 'host-local') {
    const ranges: IpRange[] = [];
    // host-local's config.go LoadIPAMConfig: the legacy top-level range, if any, becomes range
    // set 0 and the `ranges` sets follow.
    const legacy = ipRange(ipam, 0);
    if (legacy) ranges.push(legacy);
    if (Array.isArray(ipam.ranges)) {
      const first = legacy ? 1 : 0;
      ipam.ranges.forEach((rs, i) => {
        if (Array.isArray(rs))
          for (const r of rs) {
            const x = ipRange(r, first + i);
            if (x) ranges.push(x);
          }
      });
    }
    summary.ranges = ranges;
  } else if (type === 'static') staticParts(ipam, summary);
  if (type === 'host-local' || type === 'static') gatewaylessRoutes(ipam, summary);
  const own = isObject(args) && isObject(args.cni) ? strings(args.cni.ips) : undefined;
  if (own?.length) summary.ownArgsIps = own;
  return summary;
}

/** Names the position of a JSON syntax error as line and column, for a person editing YAML. */
export function jsonSyntaxReason(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // V8 gives a zero-based offset ("in JSON at position 5", "after JSON at position 30") or quotes
  // the text after an unexpected token: line and column replace both.
  const what = withoutQuotedText(message.replace(/\s+(?:in|after) JSON at position \d+.*$/s, '')).replace(
    /^Unexpected end of JSON input$/,
    'unexpected end of input',
  );
  const position = jsonErrorOffset(text);
  if (position === undefined) return `invalid JSON: ${what}`;
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `invalid JSON at line ${line}, column ${column}: ${what}`;
}

function checkNetworkName(config: Json, path: string, errors: FieldError[]): void {
  const namePath = child(path, 'name');
  const name = config.name;
  // No warning for a missing name: CNI requires one, but Multus fills in the NAD's metadata.name
  // before calling libcni (GetCNIConfigFromSpec), so such a NAD works; a third of real ones omit it.
  if (name === undefined || name === '') return;
  if (typeof name !== 'string') {
    errors.push(invalid(namePath, name, 'must be a string'));
  } else if (!CNI_NETWORK_NAME.test(name)) {
    errors.push(invalid(namePath, name, "must start with a letter or digit, followed by letters, digits, '_', '.' or '-'"));
  }
}

function checkCniVersion(config: Json, path: string, errors: FieldError[], warnings: FieldError[]): string | undefined {
  const versionPath = child(path, 'cniVersion');
  const version = config.cniVersion;
  if (version === undefined || version === '') {
    // An optional key: not "Required value", which would say the NAD is refused without it.
    warnings.push(invalid(versionPath, version ?? '', `no cniVersion: libcni assumes 0.1.0; set one of ${KNOWN_CNI_VERSIONS.join(', ')}`));
    return undefined;
  }
  if (typeof version !== 'string') {
    errors.push(invalid(versionPath, version, 'must be a string'));
    return undefined;
  }
  if (!(KNOWN_CNI_VERSIONS as readonly string[]).includes(version)) {
    errors.push(
      unsupported(
        versionPath,
        version,
        KNOWN_CNI_VERSIONS,
        `unknown CNI version; supported values: ${KNOWN_CNI_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`,
      ),
    );
  }
  return version;
}

function checkPluginType(plugin: Json, pluginPath: string, errors: FieldError[]): string | undefined {
  const typePath = child(pluginPath, 'type');
  const type = plugin.type;
  if (type === undefined || type === '') {
    errors.push(required(typePath, 'the name of the CNI plugin binary to run'));
    return undefined;
  }
  if (typeof type !== 'string') {
    errors.push(invalid(typePath, type, 'must be a string'));
    return undefined;
  }
  // libcni looks the binary up in CNI_PATH and refuses names with a path separator.
  if (type.includes('/') || type.includes('\\')) {
    errors.push(invalid(typePath, type, 'must be a plugin binary name, not a path'));
    return undefined;
  }
  return type;
}

function checkCapabilities(plugin: Json, pluginPath: string, errors: FieldError[]): string[] {
  if (!Object.hasOwn(plugin, 'capabilities')) return [];
  const capsPath = child(pluginPath, 'capabilities');
  const caps = plugin.capabilities;
  if (!isObject(caps)) {
    errors.push(invalid(capsPath, caps, 'must be an object mapping capability names to true or false'));
    return [];
  }
  const declared: string[] = [];
  for (const [name, enabled] of Object.entries(caps)) {
    if (typeof enabled !== 'boolean') errors.push(invalid(child(capsPath, name), enabled, 'must be true or false'));
    else if (enabled) declared.push(name);
  }
  return declared;
}

function checkRepeats(plugins: unknown[], pluginsPath: string, warnings: FieldError[]): void {
  const firstIndex = new Map<string, number>();
  let firstInterface: { type: string; at: number } | undefined;
  plugins.forEach((plugin, i) => {
    const type = isObject(plugin) && typeof plugin.type === 'string' ? plugin.type : undefined;
    if (type === undefined) return;
    const typePath = child(index(pluginsPath, i), 'type');
    const seen = firstIndex.get(type);
    if (seen !== undefined && SINGLE_INSTANCE_PLUGINS.has(type)) {
      warnings.push(
        invalid(typePath, type, `also at plugins[${seen}]: both instances get the same runtimeConfig and act on the same interface`),
      );
    } else if (INTERFACE_PLUGINS.has(type) && firstInterface && firstInterface.type !== type) {
      warnings.push(
        invalid(
          typePath,
          type,
          `plugins[${firstInterface.at}] (${firstInterface.type}) already creates the interface: a chain creates one`,
        ),
      );
    }
    if (seen === undefined) firstIndex.set(type, i);
    if (INTERFACE_PLUGINS.has(type) && !firstInterface) firstInterface = { type, at: i };
  });
}
