// host-local's range check: an address is in a range when it is in the subnet and between
// rangeStart and rangeEnd, both inclusive (host-local's allocator/range.go Contains).
import t from 'tap';
import { inRanges, inSubnetOf, parseCidr, placeInRanges } from '../../src/nads/ranges.js';

const wide = { subnet: '10.1.0.0/16', rangeStart: '10.1.0.200', rangeEnd: '10.1.2.10' };

t.test('inRanges: subnet, then rangeStart and rangeEnd inclusive, compared byte by byte from the first', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['10.1.0.200', true],
    ['10.1.0.199', false],
    ['10.1.1.5', true], // a higher third byte with a lower fourth one than rangeStart
    ['10.1.1.250', true], // a lower third byte with a higher fourth one than rangeEnd
    ['10.1.2.10', true],
    ['10.1.2.11', false],
    ['10.2.1.5', false],
    ['10.1.1.5/8', true], // host-local ignores the prefix
    ['::ffff:10.1.1.5', true], // IPv4-mapped: host-local compares it as IPv4
    ['fd00::1', false],
  ];
  for (const [address, want] of cases) t.equal(inRanges(address, [wide]), want, address);
});

t.test('inRanges: any range will do; bounds of another family or unreadable are no bounds', async (t) => {
  t.equal(inRanges('fd00::5', [wide, { subnet: 'fd00::/64' }]), true, 'the second range');
  t.equal(inRanges('10.1.0.5', [{ subnet: '10.1.0.0/24', rangeStart: 'fd00::1', rangeEnd: 'fd00::2' }]), true);
  t.equal(inRanges('10.1.0.5', [{ subnet: '10.1.0.0/24', rangeStart: 'nope', rangeEnd: 'nope' }]), true);
  t.equal(
    inRanges('fd00::5', [{ subnet: 'fd00::/64', rangeStart: '10.0.0.1', rangeEnd: '10.0.0.1' }]),
    true,
    'IPv4 bounds on an IPv6 range',
  );
  t.equal(inRanges('fd00::5', [{ subnet: 'fd00::/64', rangeStart: 'fd00::10' }]), false);
  t.equal(inRanges('fd00::ffff', [{ subnet: 'fd00::/64', rangeEnd: 'fd00::fffe' }]), false);
});

t.test('inRanges: undefined when it cannot be told, false as soon as one range is readable', async (t) => {
  t.equal(inRanges('nope', [wide]), undefined, 'an unreadable address');
  t.equal(inRanges('10.1.0.5', []), undefined, 'no ranges');
  t.equal(inRanges('10.1.0.5', [{ subnet: 'not-a-cidr' }]), undefined, 'no readable range');
  t.equal(inRanges('10.9.0.5', [{ subnet: 'not-a-cidr' }, wide]), false, 'one readable range, not in it');
  t.equal(inRanges('10.1.1.5', [{ subnet: 'not-a-cidr' }, wide]), true);
});

// host-local's Canonicalize (v1.10.0, executed): default bounds leave out the network address and
// the IPv4 broadcast address, the default gateway is the first address, and a /31 or /32 (/127,
// /128) subnet is refused as a whole (no verdict on an address in it).
t.test('placeInRanges: default bounds, the gateway, ranges host-local refuses', async (t) => {
  const r24 = { subnet: '10.1.0.0/24', set: 0 };
  t.equal(inRanges('10.1.0.0', [r24]), false, 'the network address is before the default rangeStart');
  t.equal(inRanges('10.1.0.255', [r24]), false, 'the broadcast address is after the default rangeEnd');
  t.equal(inRanges('10.1.0.254', [r24]), true);
  t.equal(inRanges('fd00::ffff:ffff:ffff:ffff', [{ subnet: 'fd00::/64' }]), true, 'IPv6 has no broadcast address');
  t.equal(inRanges('fd00::', [{ subnet: 'fd00::/64' }]), false);
  t.equal(inRanges('10.1.0.0', [{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.0' }]), true, 'an explicit rangeStart includes it');
  t.match(placeInRanges('10.1.0.1', [r24]), { status: 'in', gateway: true }, 'the default gateway');
  t.match(placeInRanges('10.1.0.1', [{ ...r24, gateway: '10.1.0.254' }]), { status: 'in', gateway: false });
  t.match(placeInRanges('10.1.0.255', [r24]), {
    status: 'outside-bounds',
    special: 'broadcast address',
    first: '10.1.0.1',
    last: '10.1.0.254',
  });
  t.same(placeInRanges('10.9.0.1', [r24]), { status: 'no-subnet' });
  for (const subnet of ['10.1.0.0/31', '10.1.0.0/32', 'fd00::/127', '10.1.0.1/24']) {
    t.same(
      placeInRanges(subnet.startsWith('fd') ? 'fd00::1' : '10.1.0.1', [{ subnet }]),
      { status: 'unknown' },
      `${subnet}: refused by host-local, no verdict`,
    );
  }
  t.same(
    placeInRanges('10.1.0.5', [{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.9', rangeEnd: '10.1.0.3' }]),
    { status: 'unknown' },
    'rangeStart after rangeEnd',
  );
  t.match(
    placeInRanges('10.1.0.5', [r24]),
    { key: placeInRanges('10.1.0.5/16', [r24]).status === 'in' ? (placeInRanges('10.1.0.5/16', [r24]) as { key: string }).key : 'x' },
    'one key whatever the prefix',
  );
});

t.test('parseCidr: answers kept by text are the same answers, frozen, and stay right past the cap', async (t) => {
  const first = parseCidr('10.10.0.5/24');
  t.same(first, { kind: 'ipv4', value: 0x0a0a0005n, prefix: 24 });
  t.equal(parseCidr('10.10.0.5/24'), first, 'the second read is the kept answer');
  t.ok(Object.isFrozen(first), 'a caller cannot change what another reads');
  t.equal(parseCidr('10.10.0.300/24'), undefined);
  t.equal(parseCidr('10.10.0.300/24'), undefined, 'a refusal is kept too');
  t.equal(parseCidr('::ffff:10.1.2.3'), undefined, 'IPv4-mapped refused');
  // More distinct texts than the memo keeps: every answer is still the parse of its own text.
  for (let i = 0; i < 3000; i++) {
    const text = `fd00::${i.toString(16)}/64`;
    t.equal(parseCidr(text)?.value, (0xfd00n << 112n) | BigInt(i), text);
  }
  t.same(parseCidr('10.10.0.5/24'), { kind: 'ipv4', value: 0x0a0a0005n, prefix: 24 }, 'dropped from the memo, read again alike');
  t.equal(parseCidr(`10.0.0.1/${'x'.repeat(70)}`), undefined, 'a text longer than any address is read, not kept');
});

t.test('parseCidr reads addresses as Go does: forms ipaddr.js also takes are not addresses', async (t) => {
  // Each fails in the plugin (Go's netip parser), so netattach must not read it as another address.
  for (const text of [
    '010.0.0.1',
    '0x0a.0.0.1',
    '10.1',
    '10.0.0.01/24',
    '1.2.3',
    '1.2.3.4.5',
    'fe80::1%eth0',
    '::ffff:010.0.0.1',
    '::1.2.3',
    '10.0.0.0/ 8',
    '10.0.0.0/33',
    '10.0.0.0/99999999999999999999',
    '10.0.0.0/24x',
  ]) {
    t.equal(parseCidr(text), undefined, text);
  }
  for (const [text, value, prefix] of [
    ['10.0.0.1', 0x0a000001n, 32],
    ['0.0.0.0/0', 0n, 0],
    ['255.255.255.255', 0xffffffffn, 32],
    ['10.0.0.0/024', 0x0a000000n, 24],
    ['64:ff9b::192.0.2.1/96', (0x64ff9bn << 96n) | 0xc0000201n, 96],
    ['fd00::1/64', (0xfd00n << 112n) | 1n, 64],
    ['64:ff9b::192.0.2.10/96', (0x64ff9bn << 96n) | 0xc000020an, 96],
    // Go's prefix is decimal digits, any leading zeros (its dtoi; run with Go 1.26: 10.0.0.0/24).
    ['10.0.0.0/0024', 0x0a000000n, 24],
    ['fd00::/0064', 0xfd00n << 112n, 64],
  ] as const) {
    t.same(parseCidr(text), { kind: text.includes(':') ? 'ipv6' : 'ipv4', value, prefix }, text);
  }
});

t.test('placeInRanges: an address or a subnet Go would not read gives no verdict, not another address', async (t) => {
  const r24 = { subnet: '10.1.0.0/24' };
  // ipaddr.js reads 010.1.0.5 as 8.1.0.5: "in no subnet" would be a verdict on an address host-local never sees.
  for (const address of ['010.1.0.5', '10.1.5', '0x0a.1.0.5']) t.same(placeInRanges(address, [r24]), { status: 'unknown' }, address);
  for (const subnet of ['010.1.0.0/24', '10.1.0.0/024x', '10.1/16'])
    t.same(placeInRanges('10.1.0.5', [{ subnet }]), { status: 'unknown' }, subnet);
  t.same(
    placeInRanges('10.1.0.5', [{ subnet: '10.1.0.0/24', rangeStart: '010.1.0.9' }]),
    { status: 'in', range: { subnet: '10.1.0.0/24', rangeStart: '010.1.0.9' }, gateway: false, key: 'ipv4/167837701' },
    'an unreadable bound is no bound, as before',
  );
});

// host-local's Canonicalize refuses a range whose rangeStart, rangeEnd or gateway lies outside its
// subnet (no verdict then); bounds are inclusive, so one address is a range, and an explicit
// rangeEnd may be the IPv4 broadcast address.
t.test('placeInRanges: bounds and gateways outside the subnet, one-address ranges, an unreadable gateway', async (t) => {
  const subnet = '10.1.0.0/24';
  for (const [key, value] of [
    ['rangeStart', '10.0.255.255'],
    ['rangeStart', '10.1.1.0'],
    ['rangeEnd', '10.0.255.255'],
    ['rangeEnd', '10.1.1.0'],
    ['gateway', '10.0.255.255'],
    ['gateway', '10.1.1.0'],
  ]) {
    t.same(placeInRanges('10.1.0.5', [{ subnet, [key!]: value }]), { status: 'unknown' }, `${key} ${value} outside ${subnet}`);
  }
  const broadcast = { subnet, rangeEnd: '10.1.0.255' };
  t.same(placeInRanges('10.1.0.255', [broadcast]), { status: 'in', range: broadcast, gateway: false, key: 'ipv4/167837951' });
  const one = { subnet, rangeStart: '10.1.0.7', rangeEnd: '10.1.0.7' };
  t.same(placeInRanges('10.1.0.7', [one]), { status: 'in', range: one, gateway: false, key: 'ipv4/167837703' });
  t.same(placeInRanges('10.1.0.8', [one]), { status: 'outside-bounds', range: one, first: '10.1.0.7', last: '10.1.0.7' });
  // An unreadable gateway is no gateway (never a verdict on one): not even the first address.
  const zero = { subnet: '0.0.0.0/24', gateway: 'nope' };
  t.same(placeInRanges('0.0.0.1', [zero]), { status: 'in', range: zero, gateway: false, key: 'ipv4/1' });
});

t.test('placeInRanges: exact answers outside a subnet and outside its bounds', async (t) => {
  const r24 = { subnet: '10.1.0.0/24' };
  t.same(placeInRanges('10.0.255.255', [r24]), { status: 'no-subnet' }, 'below the subnet');
  t.same(placeInRanges('10.1.1.0', [r24]), { status: 'no-subnet' }, 'above it');
  // An IPv4 address's number lies in ::/64, but host-local compares families first.
  t.same(placeInRanges('10.1.0.5', [{ subnet: '::/64' }]), { status: 'no-subnet' }, 'another family');
  const narrow = { subnet: '10.1.0.0/24', rangeStart: '10.1.0.100', rangeEnd: '10.1.0.200' };
  t.same(
    placeInRanges('10.1.0.50', [narrow]),
    { status: 'outside-bounds', range: narrow, first: '10.1.0.100', last: '10.1.0.200' },
    'no special',
  );
  t.same(placeInRanges('10.1.0.0', [narrow]), {
    status: 'outside-bounds',
    range: narrow,
    first: '10.1.0.100',
    last: '10.1.0.200',
    special: 'network address',
  });
  const v6 = { subnet: 'fd00::/120', rangeEnd: 'fd00::fe' };
  t.same(
    placeInRanges('fd00::ff', [v6]),
    { status: 'outside-bounds', range: v6, first: 'fd00::1', last: 'fd00::fe' },
    'IPv6 has no broadcast',
  );
  // Outside the bounds of two ranges of the subnet: the first range is the one named.
  const second = { subnet: '10.1.0.0/24', rangeStart: '10.1.0.210', rangeEnd: '10.1.0.220' };
  t.same(placeInRanges('10.1.0.50', [narrow, second]), {
    status: 'outside-bounds',
    range: narrow,
    first: '10.1.0.100',
    last: '10.1.0.200',
  });
  t.same(placeInRanges('10.1.0.215', [narrow, second]), { status: 'in', range: second, gateway: false, key: 'ipv4/167837911' });
});

t.test('inSubnetOf: the prefix of the subnet, in its own family', async (t) => {
  const cidr = (text: string) => parseCidr(text)!;
  t.equal(inSubnetOf(cidr('10.0.0.0/8'), cidr('10.255.0.1')), true);
  t.equal(inSubnetOf(cidr('10.0.0.0/8'), cidr('11.0.0.1')), false);
  t.equal(inSubnetOf(cidr('10.0.0.0/8'), cidr('::a00:1')), false, 'an IPv6 address of the same number');
  t.equal(inSubnetOf(cidr('::/96'), cidr('10.0.0.1')), false, 'an IPv4 address in an IPv6 subnet');
  t.equal(inSubnetOf(cidr('fd00::/64'), cidr('fd00::1:2')), true);
  t.equal(inSubnetOf(cidr('fd00::/64'), cidr('fd00:0:0:1::1')), false);
});

// The memo of parseCidr's answers: FIFO, 1,024 texts, none longer than 64 characters. A kept
// answer is the same frozen object on every read, so which texts are kept is seen from outside;
// the model below is what the bounds say, and every read is checked against it.
t.test('parseCidr: the memo keeps the last 1,024 texts of at most 64 characters, and a refusal read again evicts nothing', async (t) => {
  const model = new Map<string, true>();
  const last = new Map<string, unknown>();
  let wrong = 0;
  const read = (text: string) => {
    const expectHit = model.has(text);
    if (!expectHit && text.length <= 64) {
      if (model.size >= 1024) model.delete(model.keys().next().value!);
      model.set(text, true);
    }
    const got = parseCidr(text);
    if (got !== undefined) {
      const hit = last.get(text) === got;
      if (last.has(text) && hit !== expectHit) wrong++;
      last.set(text, got);
    }
  };
  const fresh = (i: number) => `fd02::${i.toString(16)}/64`;
  // 1,024 texts never read before: the memo now holds exactly these, the first the oldest.
  for (let i = 0; i < 1024; i++) read(fresh(i));
  for (let i = 0; i < 1024; i++) read(fresh(i));
  read(`fd02::1/${'1'.repeat(70)}`); // longer than 64: read, not kept, nothing evicted
  read(fresh(0));
  read('x'.repeat(64)); // 64 characters: kept (a refusal), the oldest evicted
  read(fresh(0));
  read(fresh(1));
  read('nope'); // a refusal is kept
  read('nope'); // and found: nothing evicted
  read(fresh(4));
  read(fresh(5));
  for (let i = 2000; i < 3030; i++) read(fresh(i));
  for (const i of [6, 7, 2010, 3029]) read(fresh(i));
  t.equal(wrong, 0, 'every read found or missed the memo as its bounds say');
  t.equal(model.size, 1024);
});
