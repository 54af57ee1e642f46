import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterNadSource, DirectoryNadSource, createNadSource, tryLoadKubeConfig } from '../../src/nads/index.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster: {server: "https://dev.example:6443"}
users:
- name: me
  user: {token: abc}
contexts:
- name: dev
  context: {cluster: dev, user: me}
current-context: dev
`;

t.test('tryLoadKubeConfig finds a configuration like kubectl, or returns undefined', async (t) => {
  const dir = t.testdir({
    'kubeconfig.yaml': KUBECONFIG,
    'broken.yaml': 'clusters: [',
    home: { '.kube': { config: KUBECONFIG.replace('dev.example', 'home.example') } },
    empty: {},
    sa: { token: 'sa-token\n', 'ca.crt': 'not a real CA' },
  });
  const none = (): boolean => false;
  const sa = join(dir, 'sa');
  const inCluster = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const cases: Array<{
    name: string;
    env: NodeJS.ProcessEnv;
    home: string;
    exists?: (p: string) => boolean;
    sa?: string;
    want: string | undefined;
    source?: string;
  }> = [
    { name: 'nothing at all', env: {}, home: join(dir, 'empty'), exists: none, want: undefined },
    {
      name: '$KUBECONFIG',
      env: { KUBECONFIG: join(dir, 'kubeconfig.yaml') },
      home: join(dir, 'home'),
      want: 'https://dev.example:6443',
      source: 'kubeconfig',
    },
    {
      name: '$KUBECONFIG with a missing first file',
      env: { KUBECONFIG: `${join(dir, 'nope')}:${join(dir, 'kubeconfig.yaml')}` },
      home: join(dir, 'empty'),
      want: 'https://dev.example:6443',
    },
    { name: '$KUBECONFIG naming only missing files', env: { KUBECONFIG: join(dir, 'nope') }, home: join(dir, 'home'), want: undefined },
    { name: '~/.kube/config', env: {}, home: join(dir, 'home'), want: 'https://home.example:6443' },
    { name: 'a malformed file', env: { KUBECONFIG: join(dir, 'broken.yaml') }, home: join(dir, 'empty'), want: undefined },
    { name: 'in cluster', env: inCluster, home: join(dir, 'empty'), sa, want: 'https://10.0.0.1:443', source: 'in-cluster' },
    {
      name: 'in cluster, IPv6 service host',
      env: { ...inCluster, KUBERNETES_SERVICE_HOST: 'fd00::1' },
      home: join(dir, 'empty'),
      sa,
      want: 'https://[fd00::1]:443',
    },
    {
      name: 'in cluster, directory from $NETATTACH_SERVICEACCOUNT_DIR',
      env: { ...inCluster, NETATTACH_SERVICEACCOUNT_DIR: sa },
      home: join(dir, 'empty'),
      want: 'https://10.0.0.1:443',
    },
    { name: 'service env without a token', env: inCluster, home: join(dir, 'empty'), sa: join(dir, 'empty'), want: undefined },
    { name: 'token without the service env', env: {}, home: join(dir, 'empty'), sa, want: undefined },
  ];
  for (const c of cases) {
    const got = await tryLoadKubeConfig({
      env: c.env,
      home: c.home,
      ...(c.exists ? { exists: c.exists } : {}),
      ...(c.sa ? { serviceAccountDir: c.sa } : {}),
    });
    t.equal(got?.server, c.want, c.name);
    if (c.source) t.equal(got?.source, c.source, `${c.name}: source`);
  }
  const kubeconfig = await tryLoadKubeConfig({ env: { KUBECONFIG: join(dir, 'kubeconfig.yaml') } });
  t.equal(await kubeconfig?.token?.(), 'abc', 'the kubeconfig user token');
  const pod = await tryLoadKubeConfig({ env: inCluster, home: join(dir, 'empty'), serviceAccountDir: sa });
  t.equal(await pod?.token?.(), 'sa-token', 'the service-account token, trimmed');
  t.equal(pod?.ca?.toString(), 'not a real CA');
});

t.test('createNadSource: a directory when given, else the cluster', async (t) => {
  const dir = t.testdir({});
  writeFileSync(join(dir, 'kc'), KUBECONFIG);
  t.type(createNadSource({ dir }), DirectoryNadSource);
  const kc = await tryLoadKubeConfig({ env: { KUBECONFIG: join(dir, 'kc') } });
  t.ok(kc);
  t.type(createNadSource({ kubeConfig: kc! }), ClusterNadSource);
  t.type(createNadSource({ dir, kubeConfig: kc! }), DirectoryNadSource, '--nads wins over a cluster');
  t.equal(createNadSource({}), undefined, 'neither');
});
