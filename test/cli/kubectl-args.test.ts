// `kubectl netattach` arguments as kubectl users type them, and the name the CLI runs under.
import t from 'tap';
import { DEFAULT_TIMEOUT_MS, OUTPUTS, parsePluginArgs, parseTimeout } from '../../src/cli/kubectl-args.js';
import { entryArgs } from '../../src/cli/main.js';
import { kubeconfigFiles } from '../../src/cli/kubeconfig.js';

t.test('accepted command lines', async (t) => {
  const cases: Array<[string[], Record<string, unknown>]> = [
    [['explain', 'pod', 'web-1'], { command: 'explain', pod: 'web-1', output: 'describe', files: [] }],
    [['explain', 'po', 'web-1', '-n', 'vms'], { pod: 'web-1', namespace: 'vms' }],
    [['explain', 'pods/web-1', '--namespace=vms', '-oyaml'], { pod: 'web-1', namespace: 'vms', output: 'yaml' }],
    [['-n', 'vms', 'explain', 'pod', 'x', '-o', 'json'], { command: 'explain', namespace: 'vms', output: 'json' }],
    [['explain', '-f', 'pod.yaml'], { files: ['pod.yaml'], pod: undefined }],
    [['explain', 'vm', 'db-1', '-n', 'vms'], { vm: { resource: 'virtualmachines', name: 'db-1' }, pod: undefined, namespace: 'vms' }],
    [['explain', 'virtualmachines/db-1'], { vm: { resource: 'virtualmachines', name: 'db-1' } }],
    [['explain', 'vmi', 'db-1'], { vm: { resource: 'virtualmachineinstances', name: 'db-1' } }],
    [['check', '-f', 'a.yaml', '-f', 'dir/', '-o', 'wide'], { command: 'check', files: ['a.yaml', 'dir/'], output: 'wide' }],
    [['check', '--filename=-'], { files: ['-'], output: 'text' }],
    [['audit'], { command: 'audit', allNamespaces: false, output: 'table' }],
    [['audit', '-A', '-o', 'json'], { allNamespaces: true, output: 'json' }],
    [
      ['audit', '--kubeconfig', '/k', '--context', 'prod', '--request-timeout', '30s'],
      { kubeconfig: '/k', context: 'prod', timeoutMs: 30_000 },
    ],
    [
      ['check', '-f', 'p.yaml', '--as', 'alice', '--as-group', 'dev', '--as-group', 'ops'],
      { userInfo: { username: 'alice', groups: ['dev', 'ops'] } },
    ],
    [[], { command: 'help' }],
    [['--help'], { command: 'help' }],
    [['audit', '-h'], { command: 'help' }],
  ];
  for (const [argv, want] of cases) {
    const got = parsePluginArgs(argv);
    t.notOk('error' in got, `${argv.join(' ')}: accepted`);
    for (const [k, v] of Object.entries(want)) t.same((got as Record<string, unknown>)[k], v, `${argv.join(' ')}: ${k}`);
    if (!('error' in got) && got.command !== 'help') {
      t.ok(OUTPUTS[got.command].includes(got.output), `${argv.join(' ')}: an output of ${got.command}`);
      if (!argv.includes('--request-timeout')) t.equal(got.timeoutMs, DEFAULT_TIMEOUT_MS);
    }
  }
});

t.test('usage errors name the flag or word at fault', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['explain'], /either "pod NAME" or -f FILE/],
    [['explain', 'pod', 'x', '-f', 'p.yaml'], /either "pod NAME" or -f FILE/],
    [['explain', 'deployment', 'x'], /"deployment x"/],
    [['explain', 'pod/'], /name must not be empty/],
    [['explain', 'vm/'], /VM name must not be empty/],
    [['explain', 'vm', 'x', '-f', 'p.yaml'], /either "vm NAME" or -f FILE/],
    [['explain', 'pod', 'x', '-o', 'table'], /-o\/--output: "table"/],
    [['audit', '-o', 'text'], /"text" is not one of wide, json, yaml for audit/],
    [['check'], /check needs -f FILE/],
    [['check', 'a.yaml'], /takes no arguments.*give files with -f/],
    [['audit', '-f', 'x'], /netattach audit PATH/],
    [['explain', 'pod', 'x', '-A'], /-A\/--all-namespaces applies to audit/],
    [['audit', '--request-timeout', 'soon'], /--request-timeout: "soon"/],
    [['audit', '--request-timeout', '0'], /--request-timeout: "0"/],
    [['audit', '-n', ''], /--namespace must not be empty/],
    [['check', '-f', '-', '-f', '-'], /stdin\) may be given only once/],
    [['audit', '--watch'], /--watch/],
  ];
  for (const [argv, want] of cases) {
    const got = parsePluginArgs(argv);
    t.ok('error' in got && want.test(got.error), `${argv.join(' ')} -> ${'error' in got ? got.error : 'accepted'}`);
  }
});

t.test('request timeouts as kubectl writes them', async (t) => {
  for (const [text, ms] of [
    ['10', 10_000],
    ['10s', 10_000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
  ] as const)
    t.equal(parseTimeout(text), ms, text);
  for (const text of ['', '0', '0s', '-1', '1d', 's', '1e3']) t.equal(parseTimeout(text), undefined, JSON.stringify(text));
});

t.test('the plugin is the CLI under the name kubectl-netattach', async (t) => {
  t.same(entryArgs('/usr/local/bin/kubectl-netattach', ['explain', 'pod', 'x']), ['kubectl', 'explain', 'pod', 'x'], 'npm bin link');
  t.same(entryArgs('/home/u/.krew/bin/kubectl-netattach', []), ['kubectl'], 'krew');
  t.same(entryArgs('C:\\bin\\kubectl-netattach.cmd', ['audit']), ['kubectl', 'audit'], 'Windows shim');
  t.same(entryArgs('/usr/local/bin/netattach', ['check', 'x']), ['check', 'x'], 'the CLI itself');
  t.same(entryArgs('/app/dist/src/cli/main.js', ['serve']), ['serve']);
  t.equal(entryArgs('/repo/test/cli/kubectl-args.test.ts', []), undefined, 'imported: nothing runs');
  t.equal(entryArgs('/usr/bin/kubectl-netattach-old', []), undefined, 'another plugin');
});

t.test('kubeconfig files as kubectl finds them', async (t) => {
  const exists = (p: string): boolean => ['/a', '/c', '/home/u/.kube/config'].includes(p);
  t.same(kubeconfigFiles({ env: {}, home: '/home/u', exists }), ['/home/u/.kube/config'], '~/.kube/config');
  t.same(kubeconfigFiles({ env: { KUBECONFIG: '/a:/b:/c' }, home: '/home/u', exists }), ['/a', '/c'], '$KUBECONFIG, missing files skipped');
  t.same(kubeconfigFiles({ env: { KUBECONFIG: '/b' }, home: '/home/u', exists }), [], '$KUBECONFIG set: ~/.kube/config is not read');
  t.same(kubeconfigFiles({ kubeconfig: '/c', env: { KUBECONFIG: '/a' }, exists }), ['/c'], '--kubeconfig wins');
  t.match(kubeconfigFiles({ kubeconfig: '/nope', env: {}, exists }), { error: /--kubeconfig: no such file "\/nope"/ });
});
