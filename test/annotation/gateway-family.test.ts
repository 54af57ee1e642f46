import t from 'tap';
import { gatewayFamily } from '../../src/annotation/formats.js';

t.test("gateways count in the family Go's To4 gives them (Multus counts default-route per family)", async (t) => {
  const cases: Array<[string, 4 | 6 | undefined]> = [
    ['10.0.0.1', 4],
    ['::ffff:10.0.0.2', 4],
    ['::FFFF:10.0.0.2', 4],
    ['0:0:0:0:0:ffff:10.0.0.2', 4],
    ['::ffff:a00:2', 4],
    // IPv4-compatible (no ffff): To4 is nil, so IPv6 (ipaddr.js alone would call these mapped).
    ['::1.2.3.4', 6],
    ['::0.0.0.0', 6],
    ['fe80::1', 6],
    ['fe80::1%eth0', undefined],
    ['nope', undefined],
  ];
  for (const [text, family] of cases) t.equal(gatewayFamily(text), family, text);
});
