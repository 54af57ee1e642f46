// Field paths as apimachinery's field.Path renders them (src/field/path.ts): a child after a dot
// (none at the root), list indices and map keys in brackets, keys unquoted.
import t from 'tap';
import { child, index, key } from '../../src/field/index.js';

t.test('child: a dot between base and name, none at the root', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['', 'metadata', 'metadata'],
    ['metadata', 'annotations', 'metadata.annotations'],
    ['spec.containers[0]', 'name', 'spec.containers[0].name'],
  ];
  for (const [base, name, want] of cases) t.equal(child(base, name), want, `child(${JSON.stringify(base)}, ${JSON.stringify(name)})`);
});

t.test('index: the position in brackets', async (t) => {
  t.equal(index('spec.containers', 0), 'spec.containers[0]');
  t.equal(index('x', 12), 'x[12]');
  t.equal(index('', 3), '[3]', 'an empty base adds nothing before the bracket');
});

t.test('key: the map key in brackets, unquoted, dots and slashes kept', async (t) => {
  t.equal(key('metadata.annotations', 'k8s.v1.cni.cncf.io/networks'), 'metadata.annotations[k8s.v1.cni.cncf.io/networks]');
  t.equal(key('x', ''), 'x[]');
});

t.test('the three compose into one path', async (t) => {
  t.equal(
    child(index(key('metadata.annotations', 'k8s.v1.cni.cncf.io/networks'), 1), 'mac'),
    'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac',
  );
});
