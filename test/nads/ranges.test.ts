// host-local's range check: an address is in a range when it is in the subnet and between
// rangeStart and rangeEnd, both inclusive (host-local's allocator/range.go Contains).
import t from 'tap';
import { inRanges } from '../../src/nads/ranges.js';

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
  t.equal(inRanges('fd00::5', [{ subnet: 'fd00::/64', rangeStart: '10.0.0.1', rangeEnd: '10.0.0.1' }]), true, 'IPv4 bounds on an IPv6 range');
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
