import t from 'tap';
import { invalid, required, forbidden, duplicate, unsupported, renderError, renderErrors, tooLong } from '../../src/field/index.js';

const path = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac';

t.test('renders each error type the way apimachinery does', async (t) => {
  const cases: Array<[ReturnType<typeof invalid>, string]> = [
    [invalid(path, '02:00', 'must be 6 bytes'), `${path}: Invalid value: "02:00": must be 6 bytes`],
    [required('metadata.name'), 'metadata.name: Required value'],
    [required('x.name', 'a network name is needed'), 'x.name: Required value: a network name is needed'],
    [forbidden('x.mac', 'not allowed here'), 'x.mac: Forbidden: not allowed here'],
    [duplicate('x[2].interface', 'net1'), 'x[2].interface: Duplicate value: "net1"'],
    [invalid('x.hostPort', 8080.5, 'must be an integer'), 'x.hostPort: Invalid value: 8080.5: must be an integer'],
    [invalid('x.obj', { a: 1 }, 'bad'), 'x.obj: Invalid value: {"a":1}: bad'],
    [unsupported('x.protocol', 'ICMP', ['TCP', 'UDP']), 'x.protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP"'],
    [tooLong('x.interface', 'abcdefghijklmnopq', 15), 'x.interface: Too long: "abcdefghijklmnopq": may not be more than 15 bytes'],
  ];
  for (const [error, want] of cases) t.equal(renderError(error), want);
});

t.test('long values are cut so a huge annotation cannot become a huge message', async (t) => {
  const out = renderError(invalid('x', 'a'.repeat(10_000), 'too big'));
  t.ok(out.length < 200, `rendered length ${out.length}`);
  t.match(out, /\.\.\.\(10002 chars\): too big$/);
});

t.test('several errors join like an aggregate', async (t) => {
  t.equal(renderErrors([required('a'), forbidden('b', 'no')]), '[a: Required value, b: Forbidden: no]');
  t.equal(renderErrors([required('a')]), 'a: Required value');
});
