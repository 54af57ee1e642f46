// The heap cap is a chart value (nodeOptions) found by its index in the Deployment's env: the
// generator checks the entry there is NODE_OPTIONS, so a reordered env cannot put the value on
// another variable.
import t from 'tap';
import { cutHoles, type ChartError } from '../../scripts/chart.js';

const deployment = (env: Array<{ name: string; value: string }>) => ({
  source: 'manifests/base/deployment.yaml',
  template: 'templates/base/deployment.yaml',
  cond: '',
  object: {
    kind: 'Deployment',
    metadata: { name: 'netattach' },
    spec: { template: { spec: { containers: [{ name: 'netattach', env }] } } },
  },
});
const nodeOptionsErrors = (errors: ChartError[]) => errors.filter((e) => e.path.endsWith('/env/2/value'));

t.test('NODE_OPTIONS at env[2]: a hole, its default the manifest value', async (t) => {
  const errors: ChartError[] = [];
  const item = deployment([
    { name: 'A', value: 'a' },
    { name: 'B', value: 'b' },
    { name: 'NODE_OPTIONS', value: '--max-old-space-size=192' },
  ]);
  const defaults = cutHoles([item], errors);
  t.same(nodeOptionsErrors(errors), []);
  t.equal(defaults.get('nodeOptions'), '--max-old-space-size=192');
});

t.test('another variable at env[2]: refused, naming the value', async (t) => {
  const errors: ChartError[] = [];
  const item = deployment([
    { name: 'A', value: 'a' },
    { name: 'NODE_OPTIONS', value: '--max-old-space-size=192' },
    { name: 'MALLOC_ARENA_MAX', value: '2' },
  ]);
  const defaults = cutHoles([item], errors);
  t.match(nodeOptionsErrors(errors), [{ value: 'MALLOC_ARENA_MAX', reason: /not NODE_OPTIONS .*value nodeOptions/ }]);
  t.notOk(defaults.has('nodeOptions'));
  t.equal(item.object.spec.template.spec.containers[0]!.env[2]!.value, '2', 'left as it is');
});
