import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
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
const TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

t.test('tryLoadKubeConfig finds a configuration like kubectl, or returns undefined', async (t) => {
  const dir = t.testdir({ 'kubeconfig.yaml': KUBECONFIG, 'broken.yaml': 'clusters: [', home: { '.kube': { config: KUBECONFIG.replace('dev.example', 'home.example') } }, empty: {} });
  const none = (): boolean => false;
  const server = (kc: KubeConfig | undefined): string | undefined => kc?.getCurrentCluster()?.server;
  const cases: Array<{ name: string; env: NodeJS.ProcessEnv; home: string; exists?: (p: string) => boolean; want: string | undefined }> = [
    { name: 'nothing at all', env: {}, home: join(dir, 'empty'), exists: none, want: undefined },
    { name: '$KUBECONFIG', env: { KUBECONFIG: join(dir, 'kubeconfig.yaml') }, home: join(dir, 'home'), want: 'https://dev.example:6443' },
    { name: '$KUBECONFIG with a missing first file', env: { KUBECONFIG: `${join(dir, 'nope')}:${join(dir, 'kubeconfig.yaml')}` }, home: join(dir, 'empty'), want: 'https://dev.example:6443' },
    { name: '$KUBECONFIG naming only missing files', env: { KUBECONFIG: join(dir, 'nope') }, home: join(dir, 'home'), want: undefined },
    { name: '~/.kube/config', env: {}, home: join(dir, 'home'), want: 'https://home.example:6443' },
    { name: 'a malformed file', env: { KUBECONFIG: join(dir, 'broken.yaml') }, home: join(dir, 'empty'), want: undefined },
    { name: 'in cluster', env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, home: join(dir, 'empty'), exists: (p) => p === TOKEN, want: 'https://10.0.0.1:443' },
    { name: 'service env without a token', env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, home: join(dir, 'empty'), exists: none, want: undefined },
  ];
  // loadFromCluster reads process.env itself.
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
  process.env.KUBERNETES_SERVICE_PORT = '443';
  t.teardown(() => {
    for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  for (const c of cases) {
    t.equal(server(tryLoadKubeConfig({ env: c.env, home: c.home, ...(c.exists ? { exists: c.exists } : {}) })), c.want, c.name);
  }
});

t.test('createNadSource: a directory when given, else the cluster', async (t) => {
  const dir = t.testdir({});
  writeFileSync(join(dir, 'kc'), KUBECONFIG);
  t.type(createNadSource({ dir }), DirectoryNadSource);
  const kc = new KubeConfig();
  kc.loadFromFile(join(dir, 'kc'));
  t.type(createNadSource({ kubeConfig: kc }), ClusterNadSource);
  t.type(createNadSource({ dir, kubeConfig: kc }), DirectoryNadSource, '--nads wins over a cluster');
});
