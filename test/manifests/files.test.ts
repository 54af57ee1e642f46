// Every YAML file under manifests/ parses, and every kustomization names files that exist.
import t from 'tap';
import { existsSync, statSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { MANIFESTS, ROOT, yamlFiles, readDocuments, kustomization, isObj, type Obj } from './load.js';

const files = yamlFiles();

t.test('every YAML document under manifests/ parses to an object', async (t) => {
  t.ok(files.length >= 10, `${files.length} files`);
  for (const path of files) {
    for (const doc of readDocuments(path)) {
      t.same(doc.errors, [], `${doc.file}#${doc.index} parses cleanly`);
      t.ok(isObj(doc.value), `${doc.file}#${doc.index} is an object`);
    }
  }
});

t.test('every Kubernetes object names its apiVersion, kind and metadata.name', async (t) => {
  for (const path of files.filter((f) => !f.endsWith('kustomization.yaml'))) {
    for (const doc of readDocuments(path)) {
      const v = doc.value as Obj;
      // A patch list (JSON 6902) is a YAML array; none is kept in a file today.
      t.type(v.apiVersion, 'string', `${doc.file}#${doc.index} apiVersion`);
      t.type(v.kind, 'string', `${doc.file}#${doc.index} kind`);
      t.match(v.metadata?.name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, `${doc.file}#${doc.index} metadata.name`);
    }
  }
});

t.test('kustomizations reference files that exist', async (t) => {
  const dirs = files.filter((f) => f.endsWith('/kustomization.yaml')).map(dirname);
  t.same(dirs.map((d) => relative(ROOT, d)).sort(), [
    'manifests',
    'manifests/base',
    'manifests/components/client-auth',
    'manifests/components/networkpolicy',
    'manifests/components/policyreport-crd',
    'manifests/monitoring',
    'manifests/overlays/cert-manager',
    'manifests/overlays/observe',
    'manifests/overlays/self-signed',
  ]);
  for (const dir of dirs) {
    const k = kustomization(dir);
    // Components (optional pieces an overlay adds) have their own kind and version.
    const component = relative(ROOT, dir).startsWith('manifests/components/');
    t.equal(
      k.apiVersion,
      component ? 'kustomize.config.k8s.io/v1alpha1' : 'kustomize.config.k8s.io/v1beta1',
      `${relative(ROOT, dir)} apiVersion`,
    );
    t.equal(k.kind, component ? 'Component' : 'Kustomization');
    for (const entry of (k.components ?? []) as string[])
      t.ok(existsSync(join(dir, entry, 'kustomization.yaml')), `${relative(ROOT, dir)}: component ${entry} exists`);
    for (const entry of (k.resources ?? []) as string[]) {
      const path = join(dir, entry);
      const ok = existsSync(path) && (statSync(path).isFile() || existsSync(join(path, 'kustomization.yaml')));
      t.ok(ok, `${relative(ROOT, dir)}: resource ${entry} exists`);
    }
    for (const gen of (k.configMapGenerator ?? []) as Obj[]) {
      for (const file of (gen.files ?? []) as string[])
        t.ok(existsSync(join(dir, file.replace(/^[^=]*=/, ''))), `${relative(ROOT, dir)}: generator file ${file} exists`);
    }
    for (const patch of (k.patches ?? []) as Obj[]) {
      if (patch.path) t.ok(existsSync(join(dir, patch.path)), `${relative(ROOT, dir)}: patch ${patch.path} exists`);
      else t.type(patch.patch, 'string', `${relative(ROOT, dir)}: inline patch`);
    }
  }
});

t.test('the base includes the policy CRD by its agreed name', async (t) => {
  const base = kustomization(join(MANIFESTS, 'base'));
  t.ok((base.resources as string[]).includes('crd-networkattachmentpolicy.yaml'));
});

t.test('`kubectl apply -k manifests/` installs the self-contained variant', async (t) => {
  t.same(kustomization(MANIFESTS).resources, ['overlays/self-signed']);
});
