// `npm run build:plugin`: kubectl-netattach as one executable that runs without npm or Node.js
// installed (Node.js's single executable applications, `node --build-sea`), the archive Krew
// installs, and a Krew manifest naming that archive by its sha256.
//
// 1. esbuild bundles the built CLI (dist/src/cli/main.js) and its dependencies into one ES module;
//    the schemas/ files go in as SEA assets (src/schemas/load.ts reads them from there).
// 2. The pinned Node.js (this process) writes itself plus the bundle as `kubectl-netattach`: the
//    name is what the CLI reads to answer as the kubectl plugin (src/cli/main.ts).
// 3. dist/plugin/kubectl-netattach_linux_amd64.tar.gz holds the executable;
//    dist/plugin/netattach.yaml is the Krew manifest, its uri a file URL by default
//    (`kubectl krew install --manifest=dist/plugin/netattach.yaml --archive=...` installs it).
//
// Output: dist/plugin/. Options: --uri URL (the manifest's download address).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/plugin');
const { values } = parseArgs({ options: { uri: { type: 'string' } } });
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; license: string };

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

/**
 * The server loads yaml and node-forge on first use, with a require from its own node_modules
 * (src/yaml, src/certs/forge.ts); an executable has none, and esbuild does not follow a
 * createRequire. In the bundle those two modules are static imports instead, with the same face.
 */
const EAGER: Record<string, string> = {
  [join(root, 'dist/src/yaml/index.js')]: "import * as Yaml from 'yaml';\nexport const yaml = () => Yaml;\n",
  [join(root, 'dist/src/certs/forge.js')]: "import nodeForge from 'node-forge';\nexport const forge = () => nodeForge;\n",
};
const swapped = new Set<string>();
const eagerPackages: Plugin = {
  name: 'eager-packages',
  setup(b) {
    // Every file is offered; those not in EAGER load as usual (undefined).
    b.onLoad({ filter: /\.js$/ }, (args) => {
      const contents = EAGER[args.path];
      if (contents === undefined) return undefined;
      swapped.add(args.path);
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

const bundle = join(out, 'kubectl-netattach.mjs');
await build({
  entryPoints: [join(root, 'dist/src/cli/main.js')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node26',
  outfile: bundle,
  logLevel: 'warning',
  legalComments: 'eof',
  plugins: [eagerPackages],
  // A few dependencies are CommonJS and call require(): give the bundle one, for Node's built-ins.
  banner: { js: "import { createRequire as __netattachRequire } from 'node:module'; const require = __netattachRequire(import.meta.url);" },
});

// A loader renamed or moved would leave a require that fails only when the plugin first needs it.
for (const path of Object.keys(EAGER)) if (!swapped.has(path)) throw new Error(`eager-packages: ${path} was not in the bundle`);

const assets = Object.fromEntries(readdirSync(join(root, 'schemas')).map((f) => [`schemas/${f}`, join(root, 'schemas', f)]));
const exe = join(out, 'kubectl-netattach');
const config = join(out, 'sea.json');
writeFileSync(
  config,
  JSON.stringify(
    { main: bundle, mainFormat: 'module', output: exe, disableExperimentalSEAWarning: true, useCodeCache: false, assets },
    null,
    2,
  ),
);
execFileSync(process.execPath, ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });

const archive = join(out, 'kubectl-netattach_linux_amd64.tar.gz');
execFileSync('tar', ['-czf', archive, '-C', out, 'kubectl-netattach'], { stdio: 'inherit' });
const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');

const manifest = `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: netattach
spec:
  version: v${pkg.version}
  shortDescription: Check pods' secondary networks (Multus NADs) before they fail
  description: |
    Explains and checks the k8s.v1.cni.cncf.io/networks annotation of pods, workloads and
    KubeVirt VMs against the cluster's NetworkAttachmentDefinitions and netattach policies:
    explain pod|vm NAME, check FILE, audit. One executable; no Node.js needed.
  platforms:
    - selector:
        matchLabels:
          os: linux
          arch: amd64
      uri: ${values.uri ?? pathToFileURL(archive).href}
      sha256: ${sha256}
      bin: kubectl-netattach
      files:
        - from: kubectl-netattach
          to: .
`;
writeFileSync(join(out, 'netattach.yaml'), manifest);
rmSync(config);
process.stdout.write(`${exe}\n${archive} sha256 ${sha256}\n${join(out, 'netattach.yaml')}\n`);
