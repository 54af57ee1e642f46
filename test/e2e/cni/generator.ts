/**
 * Selections for the oracle's property run: a chain of chains.ts × a mix of keys (mac, ips,
 * cni-args mac and ips, interface) whose values sit in and around what the chain accepts:
 * addresses at the edges of host-local's ranges (network, gateway, rangeStart, rangeEnd,
 * broadcast, one either side) and in static's subnets, MACs of every shape the kernel or the
 * parser treats apart.
 */
import fc from 'fast-check';
import { GENERATOR_CHAINS } from './chains.js';
import type { Selection } from './model.js';

const v4 = (a: number, b: number, c: number, d: number): string => `${a}.${b}.${c}.${d}`;

/** Interesting last octets per chain (within its /24, /29 for br-hl-small); static chains take a /prefix. */
const ADDRESSES: Readonly<Record<(typeof GENERATOR_CHAINS)[number], { net: [number, number, number]; octets: number[]; prefix: boolean }>> =
  {
    'br-hl': { net: [10, 10, 0], octets: [0, 1, 2, 9, 10, 11, 100, 199, 200, 201, 254, 255], prefix: false },
    'br-hl-caps': { net: [10, 10, 0], octets: [0, 1, 9, 10, 150, 200, 201, 255], prefix: false },
    'br-hl-small': { net: [10, 12, 0], octets: [0, 1, 2, 3, 6, 7, 8], prefix: false },
    'br-static': { net: [10, 20, 0], octets: [0, 1, 5, 6, 7, 255], prefix: true },
    'br-static-caps': { net: [10, 21, 0], octets: [1, 5, 9, 10], prefix: true },
    'br-tuning': { net: [10, 10, 0], octets: [1, 10, 50, 200, 201], prefix: false },
    'mv-hl': { net: [10, 30, 0], octets: [0, 1, 2, 100, 254, 255], prefix: false },
    'mv-static': { net: [10, 24, 0], octets: [0, 1, 5, 6, 255], prefix: true },
    'mv-caps': { net: [10, 24, 0], octets: [1, 5, 6], prefix: true },
    'mv-tuning': { net: [10, 28, 0], octets: [0, 1, 5, 255], prefix: false },
    'ptp-hl': { net: [10, 40, 0], octets: [1, 99, 100, 105, 110, 111], prefix: false },
    'hd-static': { net: [10, 26, 0], octets: [1, 5, 6], prefix: true },
  };

export const MAC_SHAPES = {
  unicast: fc.constantFrom(
    '02:00:00:00:00:01',
    '02:00:00:00:00:02',
    '0a:1b:2c:3d:4e:5f',
    '00:11:22:33:44:55',
    '02-00-00-00-00-07',
    '0200.0000.0008',
  ),
  multicast: fc.constantFrom('01:00:5e:00:00:01', '03:00:00:00:00:01', '33:33:00:00:00:01'),
  zero: fc.constant('00:00:00:00:00:00'),
  broadcast: fc.constant('ff:ff:ff:ff:ff:ff'),
  eightByte: fc.constant('02:00:00:00:00:00:00:01'),
  twentyByte: fc.constant('00:00:00:48:fe:80:00:00:00:00:00:00:02:c9:03:00:00:0f:00:01'),
};

/** Mostly unicast MACs, the other shapes often enough to meet each in a few dozen runs. */
export const macArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: MAC_SHAPES.unicast },
  { weight: 1, arbitrary: MAC_SHAPES.multicast },
  { weight: 1, arbitrary: MAC_SHAPES.zero },
  { weight: 1, arbitrary: MAC_SHAPES.broadcast },
  { weight: 1, arbitrary: MAC_SHAPES.eightByte },
  { weight: 1, arbitrary: MAC_SHAPES.twentyByte },
);

function ipsArb(chain: (typeof GENERATOR_CHAINS)[number]): fc.Arbitrary<string[]> {
  const a = ADDRESSES[chain];
  const one = fc.record({
    octet: fc.constantFrom(...a.octets),
    prefix: fc.constantFrom(...(a.prefix ? ['/24', '/24', '/32', ''] : ['', '', '/24'])),
  });
  const address = one.map(({ octet, prefix }) => `${v4(...a.net, octet)}${prefix}`);
  return fc.oneof(
    { weight: 3, arbitrary: address.map((x) => [x]) },
    { weight: 1, arbitrary: fc.uniqueArray(address, { minLength: 2, maxLength: 2 }) },
  );
}

/** Present one time in `1 + absent`: most pods use a few keys, so most generated pods should pass. */
const sometimes = <T>(arb: fc.Arbitrary<T>, absent: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** One pod with one selection on a generated chain, with at least one requested value. */
export const selectionArb: fc.Arbitrary<Selection> = fc.constantFrom(...GENERATOR_CHAINS).chain((name) =>
  fc
    .record({
      mac: sometimes(macArb, 1),
      ips: sometimes(ipsArb(name), 1),
      argsMac: sometimes(macArb, 3),
      argsIps: sometimes(ipsArb(name), 3),
      interface: sometimes(fc.constantFrom('eth1', 'net1', 'net2', 'data0'), 2),
    })
    .filter((r) => r.mac !== undefined || r.ips !== undefined || r.argsMac !== undefined || r.argsIps !== undefined)
    .map((r) => {
      const sel: Selection = { name };
      if (r.interface !== undefined) sel.interface = r.interface;
      if (r.mac !== undefined) sel.mac = r.mac;
      if (r.ips !== undefined) sel.ips = r.ips;
      const args: Record<string, unknown> = {};
      if (r.argsMac !== undefined) args['mac'] = r.argsMac;
      if (r.argsIps !== undefined) args['ips'] = r.argsIps;
      if (Object.keys(args).length) sel['cni-args'] = args;
      return sel;
    }),
);
