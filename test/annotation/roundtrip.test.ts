// Properties over VALID JSON-form values that use every key of the spec (name, namespace,
// interface, mac in all three forms, infiniband-guid, ips, default-route, portMappings, bandwidth,
// cni-args, ipam-claim-reference, deviceID, extension keys), and over the same values with one
// key of one element broken. Every assertion goes through fast-check (a property that throws), so
// a failure is shrunk to a minimal value instead of being reported for the first random one.
//
// Broken-build recipes (each fails a property here):
// - src/annotation/serialize.ts: drop a key from the output (`if (k !== 'mac' && src[k] !== undefined)`),
//   or src/annotation/element.ts: leave a valid key out of the selection: "valid values parse clean".
// - src/annotation/element.ts: stop checking one key (e.g. return early from elementRules): "one broken key".
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { canonicalMac, parseNetworks, serializeSelections } from '../../src/annotation/index.js';
import { BASE } from './helpers.js';

const POD_NS = 'pod-ns';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const subdomain = fc.array(label, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const byte = fc.integer({ min: 0, max: 255 });
const hex = (b: number) => b.toString(16).padStart(2, '0');

/** A unicast, locally administered 6-byte MAC in one of the three accepted forms, either case. */
const ethernetMac = fc
  .tuple(fc.array(byte, { minLength: 6, maxLength: 6 }), fc.constantFrom('colon', 'hyphen', 'dot'), fc.boolean())
  .map(([bytes, form, upper]) => {
    bytes[0] = (bytes[0]! & 0xfc) | 0x02;
    const h = bytes.map(hex);
    const text = form === 'colon' ? h.join(':') : form === 'hyphen' ? h.join('-') : `${h[0]}${h[1]}.${h[2]}${h[3]}.${h[4]}${h[5]}`;
    return upper ? text.toUpperCase() : text;
  });
/** An 8-byte GUID in colon form, never all-zero or all-FF (ib-sriov-cni rejects those). */
const guidBytes = fc.array(byte, { minLength: 8, maxLength: 8 }).map((b) => {
  b[7] = 1 + (b[7]! % 254);
  return b.map(hex).join(':');
});
/** A 20-byte IPoIB hardware address: flags and QPN, the link-local subnet prefix, a usable port GUID. */
const ipoibMac = fc
  .tuple(fc.array(byte, { minLength: 4, maxLength: 4 }), guidBytes)
  .map(([head, guid]) => `${head.map(hex).join(':')}:fe:80:00:00:00:00:00:00:${guid}`);

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
const cidr = fc.oneof(
  ipv4,
  fc.tuple(ipv4, fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`),
  ipv6,
  fc.tuple(ipv6, fc.integer({ min: 0, max: 128 })).map(([a, p]) => `${a}/${p}`),
);
const port = fc.integer({ min: 1, max: 65535 });
const portMapping = fc.record(
  { hostPort: port, containerPort: port, protocol: fc.constantFrom('TCP', 'udp', 'Sctp'), hostIP: fc.oneof(ipv4, ipv6) },
  { requiredKeys: ['hostPort', 'containerPort'], noNullPrototype: true },
);
const rate = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
/** Rate and burst come together: a burst needs its rate, and a rate alone draws a warning. */
const bandwidth = fc
  .record({ ingress: fc.option(fc.tuple(rate, rate), { nil: undefined }), egress: fc.option(fc.tuple(rate, rate), { nil: undefined }) })
  .map(({ ingress, egress }) => ({
    ...(ingress ? { ingressRate: ingress[0], ingressBurst: ingress[1] } : {}),
    ...(egress ? { egressRate: egress[0], egressBurst: egress[1] } : {}),
  }));
const cniArgs = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 3,
  noNullPrototype: true,
});

type Element = Record<string, unknown>;

/** One valid element; `i` makes its interface name unique (never eth0, lo or netN). */
const element = (i: number) =>
  fc
    .record(
      {
        name: subdomain,
        namespace: label,
        interface: fc.constantFrom('eth', 'ib', 'sriov', 'data').map((p) => `${p}${i + 1}`),
        mac: fc.oneof({ weight: 4, arbitrary: ethernetMac }, { weight: 1, arbitrary: ipoibMac }),
        'infiniband-guid': guidBytes,
        ips: fc.uniqueArray(cidr, { minLength: 1, maxLength: 3 }),
        portMappings: fc.array(portMapping, { maxLength: 2 }),
        bandwidth,
        'cni-args': cniArgs,
        'ipam-claim-reference': subdomain,
        deviceID: fc.constantFrom('0000:03:00.1', '0000:af:02.7', 'mlx5_0'),
        'example.com/ext': fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['name'], noNullPrototype: true },
    )
    .map((e: Element) => {
      // ips and ipam-claim-reference exclude each other (spec v1.3).
      if (e['ips'] !== undefined) delete e['ipam-claim-reference'];
      return e;
    });

/**
 * Addresses and host ports unique across the value, as the cross-element rules want (a repeated
 * MAC, GUID or IP is a warning, a repeated host port an error): later repeats are dropped.
 */
function unique(elements: Element[]): Element[] {
  const seen = { mac: new Set<string>(), guid: new Set<string>(), ip: new Set<string>(), port: new Set<string>() };
  const first = (set: Set<string>, key: string): boolean => !set.has(key) && !!set.add(key);
  return elements.map((e) => {
    const out = { ...e };
    if (typeof out['mac'] === 'string' && !first(seen.mac, canonicalMac(out['mac']) ?? out['mac'])) delete out['mac'];
    if (typeof out['infiniband-guid'] === 'string' && !first(seen.guid, out['infiniband-guid'].toLowerCase()))
      delete out['infiniband-guid'];
    if (Array.isArray(out['ips'])) {
      const ips = (out['ips'] as string[]).filter((ip) => first(seen.ip, ip.split('/')[0]!));
      if (ips.length > 0) out['ips'] = ips;
      else delete out['ips'];
    }
    if (Array.isArray(out['portMappings'])) {
      out['portMappings'] = (out['portMappings'] as Array<{ hostPort: number; protocol?: string; hostIP?: string }>).filter((m) =>
        first(seen.port, `${m.hostPort}/${(m.protocol ?? 'TCP').toUpperCase()}/${m.hostIP ?? ''}`),
      );
    }
    return out;
  });
}

/** 1-4 valid elements; at most one carries default-route (one IPv4 and/or one IPv6 gateway). */
const validValue = fc
  .integer({ min: 1, max: 4 })
  .chain((n) =>
    fc.tuple(fc.tuple(...Array.from({ length: n }, (_, i) => element(i))), fc.nat({ max: n }), ipv4, fc.option(ipv6, { nil: undefined })),
  )
  .map(([elements, routeAt, gw4, gw6]) => {
    const out = unique(elements);
    if (routeAt < out.length) out[routeAt]!['default-route'] = gw6 ? [gw4, gw6] : [gw4];
    return out;
  });

/**
 * What the parser must return for a valid element, derived from the element alone: its JSON text
 * read back (so -0 in an extension value is 0, as JSON writes it), the namespace filled in.
 */
function expectedSelection(e: Element): Element {
  const json = JSON.parse(JSON.stringify(e)) as Element;
  return { ...json, namespace: json['namespace'] ?? POD_NS };
}

function check(what: string, property: fc.IProperty<never> | fc.IPropertyWithHooks<never>, runs: number) {
  t.test(what, async (t) => {
    // Shrinking a large failing value can take long on a loaded machine: stop it after a minute
    // and report the smallest value found so far.
    const details = fc.check(property as fc.IProperty<unknown>, {
      numRuns: runs,
      interruptAfterTimeLimit: 60_000,
      markInterruptAsFailure: false,
    });
    t.notOk(
      details.failed,
      details.failed ? `${String(details.errorInstance)}\n${fc.defaultReportMessage(details) ?? ''}` : `${runs} values`,
    );
  });
}

check(
  'valid values parse clean and keep every key',
  fc.property(validValue, (elements) => {
    const r = parseNetworks(JSON.stringify(elements), { namespace: POD_NS });
    assert.equal(r.format, 'json');
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(
      r.networks.map((n) => n.selection),
      elements.map(expectedSelection),
    );
    assert.deepEqual(
      r.networks.map((n) => n.path),
      elements.map((_, i) => `${BASE}[${i}]`),
    );
  }) as never,
  300,
);

check(
  're-parsing the normalized output gives the same selections, with no problem',
  fc.property(validValue, (elements) => {
    const first = parseNetworks(JSON.stringify(elements), { namespace: POD_NS });
    const again = parseNetworks(serializeSelections(first.networks), { namespace: 'elsewhere' });
    assert.deepEqual(again.errors, []);
    assert.deepEqual(again.warnings, []);
    assert.deepEqual(
      again.networks.map((n) => n.selection),
      first.networks.map((n) => n.selection),
    );
  }) as never,
  300,
);

/**
 * Ways to break one key of an element: [key, broken value], each an error because Multus fails the
 * pod on it. (An 8-byte MAC, an explicit all-FF GUID, `ips: []`, a zero rate and a malformed
 * ipam-claim-reference run under Multus: warnings, see docs/annotation.md.)
 */
const breakage = fc.oneof(
  fc.constant<[string, unknown]>(['name', 'Bad_Name']),
  fc.constant<[string, unknown]>(['namespace', 'Bad.NS']),
  fc.constant<[string, unknown]>(['interface', 'a/b']),
  fc.constant<[string, unknown]>(['interface', 'x'.repeat(16)]),
  fc.constant<[string, unknown]>(['mac', '02:00:00:aa:bb']),
  fc.constant<[string, unknown]>(['infiniband-guid', '00:00:00:00:00:00:00:00']),
  fc.constant<[string, unknown]>(['ips', ['10.0.0.1/33']]),
  fc.constant<[string, unknown]>(['ips', ['010.0.0.1']]),
  fc.constant<[string, unknown]>(['default-route', ['10.0.0.1', '10.0.0.2']]),
  fc.constant<[string, unknown]>(['default-route', ['fe80::1%eth0']]),
  fc.constant<[string, unknown]>(['portMappings', [{ hostPort: 0, containerPort: 80 }]]),
  fc.constant<[string, unknown]>(['portMappings', [{ hostPort: 8080, containerPort: 70000 }]]),
  fc.constant<[string, unknown]>(['portMappings', [{ hostPort: 8080, containerPort: 80, protocol: 'icmp' }]]),
  fc.constant<[string, unknown]>(['bandwidth', { ingressBurst: 10 }]),
  fc.constant<[string, unknown]>(['cni-args', ['not', 'an', 'object']]),
  fc.constant<[string, unknown]>(['deviceID', 7]),
);

check(
  'one broken key of one element: an error at that key, and the other elements still selected',
  fc.property(validValue, fc.nat(), breakage, (elements, at, [key, bad]) => {
    const i = at % elements.length;
    const broken = elements.map((e) => ({ ...e }));
    broken[i]![key] = bad;
    if (key === 'ipam-claim-reference') delete broken[i]!['ips'];
    if (key === 'default-route') for (const e of broken) if (e !== broken[i]) delete e['default-route'];
    const r = parseNetworks(JSON.stringify(broken), { namespace: POD_NS });
    const at_ = `${BASE}[${i}].${key}`;
    assert.ok(
      r.errors.some((e) => e.path === at_ || e.path.startsWith(`${at_}[`) || e.path.startsWith(`${at_}.`)),
      `an error at ${at_}; got ${JSON.stringify(r.errors.map((e) => e.path))}`,
    );
    assert.ok(
      r.errors.every((e) => e.path.startsWith(`${BASE}[${i}]`)),
      `errors only in element ${i}: ${JSON.stringify(r.errors.map((e) => e.path))}`,
    );
    const others = elements.map((e, j) => [e, j] as const).filter(([, j]) => j !== i);
    for (const [e, j] of others) {
      const got = r.networks.find((n) => n.index === j);
      const want = expectedSelection(e);
      if (key === 'default-route') delete want['default-route'];
      assert.deepEqual(got?.selection, want, `element ${j} is still selected in full`);
    }
  }) as never,
  300,
);
