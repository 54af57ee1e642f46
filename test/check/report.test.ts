import t from 'tap';
import {
  buildReport,
  checkManifests,
  exitCodeOf,
  nothingJudged,
  renderJson,
  renderText,
  renderReadError,
  type ReadError,
} from '../../src/check/index.js';
import { inputs, nad, pod } from './helpers.js';

const NETS = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const objects = () =>
  inputs(
    nad('vf', { resourceName: 'intel.com/vf' }),
    pod('good', 'vf'),
    pod('bad', '[{"name": "vf", "mac": "nope"}, {"name": "gone"}]'),
    pod('warn', '[{"name": "vf", "interface": ""}]'),
    { kind: 'Thing' },
  );
const broken: ReadError = { file: 'broken.yaml', line: 3, column: 1, message: 'Map keys must be unique' };

t.test('JSON output, version 1: the documented shape, pinned', async (t) => {
  const report = buildReport(checkManifests(objects(), { mutate: true }), [broken]);
  const parsed = JSON.parse(renderJson(report));
  const resources = { requests: { 'intel.com/vf': '1' }, limits: { 'intel.com/vf': '1' } };
  const mutation = { patch: [{ op: 'add', path: '/spec/containers/0/resources', value: resources }], resources: { app: resources } };
  const pod = (index: number, name: string) => ({ file: 'in.yaml', index, apiVersion: 'v1', kind: 'Pod', namespace: 'default', name });
  t.strictSame(parsed, {
    version: 1,
    results: [
      {
        file: 'in.yaml',
        index: 0,
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinition',
        namespace: 'default',
        name: 'vf',
        allowed: true,
        errors: [],
        warnings: [],
        audits: [],
      },
      { ...pod(1, 'good'), allowed: true, errors: [], warnings: [], audits: [], mutation },
      {
        ...pod(2, 'bad'),
        allowed: false,
        errors: [
          {
            path: `${NETS}[0].mac`,
            type: 'Invalid value',
            value: 'nope',
            reason:
              'must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms',
          },
          {
            path: `${NETS}[1]`,
            type: 'Not found',
            value: 'default/gone',
            reason: 'no such NetworkAttachmentDefinition',
            rule: 'networkExists',
            policy: 'builtin',
          },
        ],
        warnings: [],
        audits: [],
      },
      {
        ...pod(3, 'warn'),
        allowed: true,
        errors: [],
        warnings: [`${NETS}[0].interface: Invalid value: "": empty, treated as not set (as Multus does)`],
        audits: [],
        mutation,
      },
      {
        file: 'in.yaml',
        index: 4,
        kind: 'Thing',
        allowed: true,
        skipped: 'not a Kubernetes object: apiVersion not set',
        errors: [],
        warnings: [],
        audits: [],
      },
    ],
    readErrors: [{ file: 'broken.yaml', line: 3, column: 1, message: 'Map keys must be unique' }],
    summary: { objects: 5, denied: 1, errors: 2, warnings: 1, skipped: 1, readErrors: 1 },
  });
  // Key order is part of the format (stable diffs).
  t.same(Object.keys(parsed.results[2]), [
    'file',
    'index',
    'apiVersion',
    'kind',
    'namespace',
    'name',
    'allowed',
    'errors',
    'warnings',
    'audits',
  ]);
  t.same(Object.keys(parsed), ['version', 'results', 'readErrors', 'summary']);
});

t.test('text output: problems per object with the file, the object and the rendered field errors; clean objects quiet', async (t) => {
  const report = buildReport(checkManifests(objects()), []);
  t.equal(
    renderText(report),
    [
      'in.yaml: Pod/default/bad',
      `  error: ${NETS}[0].mac: Invalid value: "nope": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms`,
      `  error: ${NETS}[1]: Not found: "default/gone": no such NetworkAttachmentDefinition`,
      'in.yaml: Pod/default/warn',
      `  warning: ${NETS}[0].interface: Invalid value: "": empty, treated as not set (as Multus does)`,
      'in.yaml: Thing/<no name>',
      '  skipped: not a Kubernetes object: apiVersion not set',
      '5 objects checked, 1 denied, 2 errors, 1 warning, 1 skipped',
      '',
    ].join('\n'),
  );
});

t.test('text output: --verbose lists clean objects; lines and list items locate the object', async (t) => {
  const report = buildReport(
    checkManifests([
      { file: 'l.json', index: 0, item: 3, line: 12, object: pod('p', undefined) },
      { file: 'l.json', index: 1, object: 7 },
    ]),
    [],
  );
  t.equal(
    renderText(report, { verbose: true }),
    'l.json:12: Pod/default/p\n  ok\nl.json: document 1\n  skipped: not a Kubernetes object (a number, not a mapping)\n2 objects checked, 0 denied, 0 errors, 0 warnings, 1 skipped\n',
  );
});

t.test('text output: --mutate lines name each container and the nodeSelector', async (t) => {
  const vf = nad('vf', { resourceName: 'intel.com/vf', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'sriov=true' } });
  const text = renderText(buildReport(checkManifests(inputs(vf, pod('p', 'vf')), { mutate: true }), []));
  t.match(
    text,
    /^in\.yaml: Pod\/default\/p\n  mutate: container app: requests intel\.com\/vf=1; limits intel\.com\/vf=1\n  mutate: nodeSelector sriov=true\n  patch: \[\{"op":"add"/,
  );
});

t.test('read errors render as FILE:LINE:COLUMN: error: message', async (t) => {
  t.equal(renderReadError(broken), 'broken.yaml:3:1: error: Map keys must be unique\n');
  t.equal(
    renderReadError({ file: 'gone.yaml', message: 'cannot read: no such file or directory' }),
    'gone.yaml: error: cannot read: no such file or directory\n',
  );
});

t.test('exit codes: 0 clean or warnings only, 1 denied, 2 unreadable input (wins over 1)', async (t) => {
  const clean = buildReport(checkManifests(inputs(nad('vf'), pod('p', 'vf'))), []);
  const warned = buildReport(checkManifests(inputs(nad('vf'), pod('p', '[{"name": "vf", "interface": ""}]'))), []);
  const denied = buildReport(checkManifests(inputs(pod('p', 'missing'))), []);
  t.equal(exitCodeOf(clean), 0);
  t.equal(warned.summary.warnings, 1);
  t.equal(exitCodeOf(warned), 0);
  t.equal(exitCodeOf(denied), 1);
  t.equal(exitCodeOf(buildReport(denied.results, [broken])), 2);
  t.equal(exitCodeOf(buildReport([], [broken])), 2);
  t.equal(exitCodeOf(buildReport([], [])), 2, 'empty inputs: nothing judged (issue 25)');
});

t.test(
  'nothing to judge: empty inputs, only kinds no webhook sees, or only excluded namespaces are exit 2, the kinds counted',
  async (t) => {
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } };
    const cases: Array<[string, unknown[], string | undefined, number]> = [
      ['empty', [], 'nothing to judge: the input holds no objects; check judges Pods', 2],
      ['other kinds', [cm('a'), svc, cm('b')], 'nothing to judge: 3 objects skipped (2 ConfigMap, 1 Service); check judges Pods', 2],
      ['not objects', ['text', { kind: 'Thing' }], 'nothing to judge: 2 objects skipped (2 not a Kubernetes object);', 2],
      [
        'excluded namespace',
        [pod('sys', 'vf', 'kube-system'), cm('a')],
        'nothing to judge: 2 objects skipped (1 ConfigMap, 1 Pod in an excluded namespace);',
        2,
      ],
      ['one pod judged among others', [cm('a'), pod('p', undefined)], undefined, 0],
      ['a NAD alone is judged', [nad('vf')], undefined, 0],
    ];
    for (const [name, objects, message, code] of cases) {
      const report = buildReport(checkManifests(inputs(...objects)), []);
      const got = nothingJudged(report.results);
      if (message === undefined) t.equal(got, undefined, name);
      else t.ok(got?.startsWith(message), `${name}: ${got}`);
      t.equal(exitCodeOf(report), code, `${name}: exit ${code}`);
    }
  },
);
