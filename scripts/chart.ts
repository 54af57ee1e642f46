/**
 * Writes the Helm chart charts/netattach from the kustomize tree manifests/, its one source: every
 * template is a manifest's objects with the values' holes cut in, each overlay or component
 * becomes a condition on a value, and values.yaml takes its defaults from the manifests.
 *
 *   npx tsx scripts/chart.ts           writes charts/netattach
 *   npx tsx scripts/chart.ts --check   exit 1 when the committed chart differs (test/manifests/chart.test.ts)
 *
 * What kustomize does to the manifests is done here only for the forms manifests/ uses (resources,
 * labels, images, configMapGenerator, JSON patches that append to a list, strategic merge patches
 * that add map keys); any other form is an error naming the kustomization, not a silent
 * difference. test/e2e/helm.e2e.ts compares `helm template` with `kubectl kustomize` for every
 * overlay and component.
 */
import { readFileSync, readdirSync, statSync, existsSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: the chart's values are walked as loose YAML
type Obj = Record<string, any>;

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CHART_DIR = 'charts/netattach';
const GENERATED_BY = 'by scripts/chart.ts: do not edit.';

/** A generator error, rendered like a Kubernetes field error. */
export interface ChartError {
  path: string;
  value: unknown;
  reason: string;
}
export const renderError = (e: ChartError): string => `${e.path}: ${e.reason}: ${JSON.stringify(e.value)}`;

/** A kustomization directory of manifests/ and the value that puts it into the chart ('' = always). */
export interface Layer {
  dir: string;
  cond: string;
}

export const LAYERS: Layer[] = [
  { dir: 'base', cond: '' },
  { dir: 'overlays/self-signed', cond: 'eq .Values.certificates.mode "self-signed"' },
  { dir: 'overlays/cert-manager', cond: 'eq .Values.certificates.mode "cert-manager"' },
  { dir: 'overlays/observe', cond: '.Values.observe' },
  { dir: 'components/policyreport-crd', cond: '.Values.policyReportCrd.enabled' },
  { dir: 'components/client-auth', cond: '.Values.clientAuth.enabled' },
  { dir: 'components/networkpolicy', cond: '.Values.networkPolicy.enabled' },
  { dir: 'monitoring', cond: '.Values.monitoring.enabled' },
];

/** A field of a manifest object that a value sets; the manifest's content is the default. */
export interface ValueHole {
  kind: string;
  name: string;
  pointer: string;
  value: string;
  /** The list entry the pointer goes into must have this `name` (an env variable found by index). */
  named?: string;
  /**
   * A NetworkPolicy's `from`: an empty or null list admits every source, so the render fails with
   * this message instead. (An empty `key:` in a values file is null, which Helm drops before
   * schema validation: the schema alone cannot refuse it.)
   */
  peers?: string;
}

export const VALUE_HOLES: ValueHole[] = [
  { kind: 'Deployment', name: 'netattach', pointer: '/spec/replicas', value: 'replicas' },
  { kind: 'Deployment', name: 'netattach', pointer: '/spec/template/spec/containers/0/imagePullPolicy', value: 'image.pullPolicy' },
  { kind: 'Deployment', name: 'netattach', pointer: '/spec/template/spec/containers/0/resources', value: 'resources' },
  // The heap cap goes with the memory limit (docs/performance.md, "Sizing").
  {
    kind: 'Deployment',
    name: 'netattach',
    pointer: '/spec/template/spec/containers/0/env/2/value',
    value: 'nodeOptions',
    named: 'NODE_OPTIONS',
  },
  { kind: 'MutatingWebhookConfiguration', name: 'netattach', pointer: '/webhooks/0/failurePolicy', value: 'failurePolicy' },
  { kind: 'ValidatingWebhookConfiguration', name: 'netattach', pointer: '/webhooks/0/failurePolicy', value: 'failurePolicy' },
  { kind: 'ValidatingWebhookConfiguration', name: 'netattach', pointer: '/webhooks/2/failurePolicy', value: 'failurePolicy' },
  {
    kind: 'NetworkPolicy',
    name: 'netattach',
    pointer: '/spec/ingress/0/from',
    value: 'networkPolicy.apiserverFrom',
    peers:
      'networkPolicy.apiserverFrom: the NetworkPolicy needs at least one peer for the webhook port (the kube-apiserver); empty or null, it would admit every source',
  },
  {
    kind: 'NetworkPolicy',
    name: 'netattach',
    pointer: '/spec/ingress/1/from',
    value: 'networkPolicy.prometheusFrom',
    peers:
      'networkPolicy.prometheusFrom: the NetworkPolicy needs at least one peer for the health and metrics port (Prometheus); empty or null, it would admit every source',
  },
];

/** Images (kustomize `images` names) and the value of each: `<value>.repository` and `<value>.tag`. */
export const IMAGE_VALUES: Record<string, string> = {
  'ghcr.io/netattach/netattach': 'image',
  'registry.k8s.io/kubectl': 'certificates.kubectlImage',
};

/** Lists that take a list value's items after their own. */
export const SPLICES: ValueHole[] = [
  { kind: 'Deployment', name: 'netattach', pointer: '/spec/template/spec/containers/0/args', value: 'extraArgs' },
];

// ---------------------------------------------------------------- the template tree

/** A value's expression in place of a manifest field. */
class Hole {
  constructor(readonly expr: string) {}
}
/** Items of a list, or keys of a map, that only a condition puts there. */
class Cond {
  constructor(
    readonly cond: string,
    readonly content: unknown[] | Obj,
  ) {}
}
/** A list value's items, appended to a list. */
class Splice {
  constructor(readonly expr: string) {}
}

interface Item {
  source: string; // the manifest file, relative to the repository
  template: string; // the template file, relative to the chart
  cond: string;
  object: Obj;
}

const isMap = (v: unknown): v is Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Hole) && !(v instanceof Cond) && !(v instanceof Splice);
const decode = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');
const tokens = (pointer: string): string[] => pointer.split('/').slice(1).map(decode);
const valuesExpr = (value: string): string => `.Values.${value}`;

// kustomize reads YAML 1.1 (sigs.k8s.io/yaml over go-yaml): 0440 is octal there, decimal 440 in 1.2.
function readYaml(path: string): unknown[] {
  return YAML.parseAllDocuments(readFileSync(path, 'utf8'), { version: '1.1' })
    .map((d) => d.toJS({ maxAliasCount: 100 }) as unknown)
    .filter((v) => v != null);
}

/** The parent of the pointer's last token, or an error naming what is missing. */
function parentOf(root: Obj, pointer: string): { parent: Obj | unknown[]; key: string } | string {
  const path = tokens(pointer);
  let node: unknown = root;
  for (const t of path.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(t)];
    else if (isMap(node)) node = node[t];
    else return `no ${t}`;
    if (node === undefined) return `no ${t}`;
  }
  if (!Array.isArray(node) && !isMap(node)) return 'not a list or map';
  return { parent: node, key: path[path.length - 1]! };
}

function get(root: Obj, pointer: string): unknown {
  const at = parentOf(root, pointer);
  if (typeof at === 'string') return undefined;
  return Array.isArray(at.parent) ? at.parent[Number(at.key)] : at.parent[at.key];
}

function set(root: Obj, pointer: string, value: unknown): boolean {
  const at = parentOf(root, pointer);
  if (typeof at === 'string') return false;
  if (Array.isArray(at.parent)) at.parent[Number(at.key)] = value;
  else at.parent[at.key] = value;
  return true;
}

/** Adds a strategic merge patch's new keys, under a condition unless it is ''. */
export function mergeKeys(target: Obj, patch: Obj, cond: string, path: string, errors: ChartError[]): void {
  for (const [key, value] of Object.entries(patch)) {
    const here = `${path}.${key}`;
    if (!(key in target)) target[key] = cond ? new Cond(cond, { [key]: value }) : value;
    else if (isMap(target[key]) && isMap(value)) mergeKeys(target[key] as Obj, value, cond, here, errors);
    else if (JSON.stringify(target[key]) !== JSON.stringify(value))
      errors.push({ path: here, value, reason: 'a patch may only add keys (the chart has no way to replace a value under a condition)' });
  }
}

/** Applies one entry of a kustomization's `patches` to the objects it targets. */
export function applyPatch(items: Item[], entry: Obj, cond: string, where: string, errors: ChartError[]): void {
  if (entry.path !== undefined)
    return void errors.push({ path: `${where}.path`, value: entry.path, reason: 'patch files are not supported: inline the patch' });
  const text = String(entry.patch ?? '');
  const parsed = YAML.parse(text) as unknown;
  if (Array.isArray(parsed)) {
    const target = items.find((i) => i.object.kind === entry.target?.kind && i.object.metadata?.name === entry.target?.name);
    if (!target) return void errors.push({ path: `${where}.target`, value: entry.target, reason: 'no object of an earlier layer matches' });
    for (const [n, op] of (parsed as Obj[]).entries()) {
      const opWhere = `${where}.patch[${n}]`;
      if (op.op !== 'add' || typeof op.path !== 'string' || !op.path.endsWith('/-')) {
        errors.push({ path: opWhere, value: op, reason: 'only `add` to the end of a list (path .../-) is supported' });
        continue;
      }
      const list = get(target.object, op.path.slice(0, -2));
      if (!Array.isArray(list)) {
        errors.push({ path: `${opWhere}.path`, value: op.path, reason: 'not a list in the target' });
        continue;
      }
      list.push(cond ? new Cond(cond, [op.value]) : op.value);
    }
  } else if (isMap(parsed)) {
    const target = items.find((i) => i.object.kind === parsed.kind && i.object.metadata?.name === parsed.metadata?.name);
    if (!target)
      return void errors.push({
        path: `${where}.patch`,
        value: `${parsed.kind}/${parsed.metadata?.name}`,
        reason: 'no object of an earlier layer matches',
      });
    const { apiVersion: _a, kind: _k, ...rest } = parsed;
    const { name: _n, ...metadata } = (rest.metadata ?? {}) as Obj;
    mergeKeys(target.object, { ...rest, metadata }, cond, `${where}.patch`, errors);
  } else errors.push({ path: `${where}.patch`, value: text, reason: 'neither a JSON patch nor a strategic merge patch' });
}

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'labels', 'images', 'configMapGenerator']);

/** The objects of every layer, each layer's own resources and generated ConfigMaps, with its patches applied. */
export function collect(manifests: string, errors: ChartError[]): { items: Item[]; files: Map<string, string> } {
  const items: Item[] = [];
  const files = new Map<string, string>(); // chart file -> content (configMapGenerator sources)
  const layerDirs = new Set(LAYERS.map((l) => join(manifests, l.dir)));
  for (const layer of LAYERS) {
    const dir = join(manifests, layer.dir);
    const where = `manifests/${layer.dir}/kustomization.yaml`;
    const k = readYaml(join(dir, 'kustomization.yaml'))[0] as Obj;
    for (const field of Object.keys(k))
      if (!KNOWN_FIELDS.has(field))
        errors.push({ path: `${where}.${field}`, value: k[field], reason: 'not supported by the chart generator' });
    if (k.components)
      errors.push({
        path: `${where}.components`,
        value: k.components,
        reason: 'a layer may not include components: the chart adds them by value',
      });
    const own: Item[] = [];
    for (const entry of (k.resources ?? []) as string[]) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (!layerDirs.has(path))
          errors.push({ path: `${where}.resources`, value: entry, reason: 'a directory that is not a layer of scripts/chart.ts' });
        continue;
      }
      for (const object of readYaml(path))
        own.push({ source: relative(ROOT, path), template: `templates/${layer.dir}/${entry}`, cond: layer.cond, object: object as Obj });
    }
    for (const [n, gen] of ((k.configMapGenerator ?? []) as Obj[]).entries()) {
      const genWhere = `${where}.configMapGenerator[${n}]`;
      if (gen.options?.disableNameSuffixHash !== true)
        errors.push({
          path: `${genWhere}.options.disableNameSuffixHash`,
          value: gen.options?.disableNameSuffixHash,
          reason: 'must be true (a hashed name would need kustomize to compute it)',
        });
      const data: Obj = {};
      for (const file of (gen.files ?? []) as string[]) {
        const chartFile = `files/${layer.dir}/${file}`;
        files.set(chartFile, readFileSync(join(dir, file), 'utf8'));
        data[file] = new Hole(`.Files.Get ${JSON.stringify(chartFile)} | toJson`);
      }
      const metadata: Obj = {
        name: gen.name,
        ...(gen.namespace ? { namespace: gen.namespace } : {}),
        ...(gen.options?.labels ? { labels: gen.options.labels } : {}),
      };
      own.push({
        source: `manifests/${layer.dir}/kustomization.yaml`,
        template: `templates/${layer.dir}/configmap-${gen.name}.yaml`,
        cond: layer.cond,
        object: { apiVersion: 'v1', kind: 'ConfigMap', metadata, data },
      });
    }
    // labels: metadata.labels of the layer's own objects (includeSelectors false, no templates).
    for (const [n, l] of ((k.labels ?? []) as Obj[]).entries()) {
      if (l.includeSelectors || l.includeTemplates)
        errors.push({
          path: `${where}.labels[${n}]`,
          value: l,
          reason: 'only includeSelectors: false without includeTemplates is supported',
        });
      for (const item of own) item.object.metadata = { ...item.object.metadata, labels: { ...item.object.metadata?.labels, ...l.pairs } };
    }
    // images: applied to every container image of the layer's own objects (the holes come later).
    for (const image of (k.images ?? []) as Obj[]) {
      if (image.newName || image.digest) errors.push({ path: `${where}.images`, value: image, reason: 'only newTag is supported' });
      for (const item of own)
        for (const c of containersOf(item.object)) if (repositoryOf(c.image) === image.name) c.image = `${image.name}:${image.newTag}`;
    }
    items.push(...own);
    for (const [n, p] of ((k.patches ?? []) as Obj[]).entries()) applyPatch(items, p, layer.cond, `${where}.patches[${n}]`, errors);
  }
  return { items, files };
}

const repositoryOf = (image: string): string => image.replace(/:[^:/]+$/, '');

function containersOf(object: Obj): Obj[] {
  const specs = [object.spec?.template?.spec, object.spec?.jobTemplate?.spec?.template?.spec].filter(isMap);
  return specs.flatMap((s) => [...((s.initContainers ?? []) as Obj[]), ...((s.containers ?? []) as Obj[])]);
}

/** Cuts the value holes into the objects; returns each value's default as the manifests set it. */
export function cutHoles(items: Item[], errors: ChartError[]): Map<string, unknown> {
  const defaults = new Map<string, unknown>();
  const record = (value: string, found: unknown, where: string): void => {
    if (defaults.has(value) && JSON.stringify(defaults.get(value)) !== JSON.stringify(found))
      errors.push({
        path: where,
        value: found,
        reason: `differs from the other fields of value ${value} (${JSON.stringify(defaults.get(value))})`,
      });
    else defaults.set(value, found);
  };
  for (const hole of VALUE_HOLES) {
    const where = `${hole.kind}/${hole.name}${hole.pointer}`;
    const item = items.find((i) => i.object.kind === hole.kind && i.object.metadata?.name === hole.name);
    const found = item && get(item.object, hole.pointer);
    if (found === undefined) {
      errors.push({ path: where, value: hole.value, reason: 'no such field in the manifests' });
      continue;
    }
    if (hole.named !== undefined) {
      const entry = get(item!.object, hole.pointer.slice(0, hole.pointer.lastIndexOf('/'))) as Obj | undefined;
      if (entry?.name !== hole.named) {
        errors.push({
          path: where,
          value: entry?.name,
          reason: `the entry there is not ${hole.named} (the manifests' list changed: fix the pointer of value ${hole.value})`,
        });
        continue;
      }
    }
    record(hole.value, found, where);
    // `or` and `and` stop at their first deciding argument (Go 1.18+ templates): `fail` runs only when the list is empty or null.
    const expr = valuesExpr(hole.value);
    set(
      item!.object,
      hole.pointer,
      new Hole(hole.peers ? `or (and ${expr} (${expr} | toJson)) (fail ${JSON.stringify(hole.peers)})` : `${expr} | toJson`),
    );
  }
  for (const item of items) {
    for (const c of containersOf(item.object)) {
      const value = IMAGE_VALUES[repositoryOf(String(c.image))];
      if (!value) continue;
      const tag = String(c.image).slice(repositoryOf(String(c.image)).length + 1);
      record(`${value}.repository`, repositoryOf(String(c.image)), `${item.source}: ${c.name}`);
      record(`${value}.tag`, tag, `${item.source}: ${c.name}`);
      c.image = new Hole(`printf "%s:%s" ${valuesExpr(value)}.repository ${valuesExpr(value)}.tag | toJson`);
    }
  }
  for (const splice of SPLICES) {
    const item = items.find((i) => i.object.kind === splice.kind && i.object.metadata?.name === splice.name);
    const list = item && get(item.object, splice.pointer);
    if (!Array.isArray(list))
      errors.push({ path: `${splice.kind}/${splice.name}${splice.pointer}`, value: splice.value, reason: 'not a list in the manifests' });
    else list.push(new Splice(valuesExpr(splice.value)));
  }
  return defaults;
}

// ---------------------------------------------------------------- rendering

/** YAML of one object with the markers turned into Go template text. */
export function renderObject(object: Obj): string {
  const markers: Array<Hole | Cond | Splice> = [];
  const mark = (v: unknown): unknown => {
    if (v instanceof Hole || v instanceof Splice) return `${v instanceof Hole ? 'HOLE' : 'SPLICE'}_${markers.push(v) - 1}`;
    if (v instanceof Cond) {
      const id = `COND_${markers.push(v) - 1}`;
      return { [id]: mark(v.content) };
    }
    if (Array.isArray(v)) return v.map(mark);
    if (isMap(v)) {
      const out: Obj = {};
      for (const [k, x] of Object.entries(v)) {
        if (x instanceof Cond) Object.assign(out, mark(x) as Obj);
        else out[k] = mark(x);
      }
      return out;
    }
    // Text that Go templates would read as an action (Prometheus' {{ $labels.x }}): a string literal.
    if (typeof v === 'string' && /\{\{|\}\}/.test(v)) return mark(new Hole(`${JSON.stringify(v)} | toJson`));
    return v;
  };
  const text = YAML.stringify(mark(object), { lineWidth: 0, aliasDuplicateObjects: false });
  return expand(text.replace(/\n$/, '').split('\n'), markers).join('\n');
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

function expand(lines: string[], markers: Array<Hole | Cond | Splice>): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const cond = /^(\s*)(- )?COND_(\d+):$/.exec(line);
    if (cond) {
      const base = cond[1]!.length;
      let j = i + 1;
      while (j < lines.length && indentOf(lines[j]!) > base) j++;
      const block = lines.slice(i + 1, j);
      if (block.some((l) => l.trim() === '')) throw new Error(`a conditional block with an empty line: ${block.join('\n')}`);
      const shift = Math.min(...block.map(indentOf)) - base;
      const pad = ' '.repeat(base);
      out.push(
        `${pad}{{- if ${(markers[Number(cond[3])] as Cond).cond} }}`,
        ...expand(
          block.map((l) => l.slice(shift)),
          markers,
        ),
        `${pad}{{- end }}`,
      );
      i = j - 1;
      continue;
    }
    const splice = /^(\s*)- SPLICE_(\d+)$/.exec(line);
    if (splice) {
      const pad = splice[1]!;
      out.push(`${pad}{{- range ${(markers[Number(splice[2])] as Splice).expr} }}`, `${pad}- {{ toJson . }}`, `${pad}{{- end }}`);
      continue;
    }
    out.push(line.replace(/\bHOLE_(\d+)$/, (_, n: string) => `{{ ${(markers[Number(n)] as Hole).expr} }}`));
  }
  return out;
}

/** A template file: its objects, wrapped in the layer's condition. */
export function renderTemplate(source: string, cond: string, objects: Obj[]): string {
  const body = [`# Generated from ${source} ${GENERATED_BY}`, ...objects.map((o) => `---\n${renderObject(o)}`)].join('\n');
  return cond ? `{{- if ${cond} }}\n${body}\n{{- end }}\n` : `${body}\n`;
}

// ---------------------------------------------------------------- values

interface Schema {
  description?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
}

/** values.yaml: the schema's tree, each leaf's default from the schema or else from the manifests. */
export function valuesOf(schema: Schema, defaults: Map<string, unknown>, errors: ChartError[], prefix = ''): Obj {
  const out: Obj = {};
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (sub.properties) out[key] = valuesOf(sub, defaults, errors, path);
    else if (sub.default !== undefined) out[key] = sub.default;
    else if (defaults.has(path)) out[key] = defaults.get(path);
    else
      errors.push({
        path: `schemas/helm-values.schema.json: ${path}`,
        value: null,
        reason: 'no default in the schema and no field of the manifests sets it',
      });
  }
  if (prefix === '') {
    for (const value of defaults.keys()) {
      if (!hasPath(schema, value))
        errors.push({
          path: `schemas/helm-values.schema.json: ${value}`,
          value: null,
          reason: 'a value of scripts/chart.ts that the schema does not declare',
        });
    }
  }
  return out;
}

const hasPath = (schema: Schema, path: string): boolean =>
  path.split('.').reduce<Schema | undefined>((s, k) => s?.properties?.[k], schema) !== undefined;

function valuesYaml(values: Obj, schema: Schema): string {
  const doc = new YAML.Document(values);
  const describe = (node: unknown, s: Schema | undefined): void => {
    if (!YAML.isMap(node)) return;
    for (const pair of node.items) {
      const key = String((pair.key as YAML.Scalar).value);
      const sub = s?.properties?.[key];
      if (sub?.description) (pair.key as YAML.Scalar).commentBefore = ` ${sub.description}`;
      describe(pair.value, sub);
    }
  };
  describe(doc.contents, schema);
  return `# Generated from manifests/ and schemas/helm-values.schema.json ${GENERATED_BY}\n# Each value is described in values.schema.json (schemas/helm-values.schema.json).\n${doc.toString({ lineWidth: 0 })}`;
}

// ---------------------------------------------------------------- the chart

/** Every file of the chart, by path relative to charts/netattach, or the errors that stop it. */
export function renderChart(root = ROOT): { files: Map<string, string>; errors: ChartError[] } {
  const errors: ChartError[] = [];
  const manifests = join(root, 'manifests');
  const { items, files: sources } = collect(manifests, errors);
  const defaults = cutHoles(items, errors);
  const schema = JSON.parse(readFileSync(join(root, 'schemas/helm-values.schema.json'), 'utf8')) as Schema;
  const values = valuesOf(schema, defaults, errors);
  const rootResources = (readYaml(join(manifests, 'kustomization.yaml'))[0] as Obj).resources as string[];
  const defaultMode = `overlays/${values.certificates?.mode}`;
  if (JSON.stringify(rootResources) !== JSON.stringify([defaultMode]))
    errors.push({
      path: 'manifests/kustomization.yaml.resources',
      value: rootResources,
      reason: `the chart's default is certificates.mode ${values.certificates?.mode}, i.e. [${defaultMode}]`,
    });

  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; description: string };
  const files = new Map<string, string>();
  files.set(
    'Chart.yaml',
    `# Generated from manifests/ and package.json ${GENERATED_BY}\n${YAML.stringify(
      {
        apiVersion: 'v2',
        name: 'netattach',
        description: pkg.description,
        type: 'application',
        version: pkg.version,
        appVersion: values.image?.tag,
        // webhook matchConditions are GA from 1.30 (docs/deploy.md)
        kubeVersion: '>=1.30.0-0',
      },
      { lineWidth: 0 },
    )}`,
  );
  files.set('values.yaml', valuesYaml(values, schema));
  files.set('values.schema.json', readFileSync(join(root, 'schemas/helm-values.schema.json'), 'utf8'));
  for (const [path, text] of sources) files.set(path, text);
  const byTemplate = new Map<string, Item[]>();
  for (const item of items) byTemplate.set(item.template, [...(byTemplate.get(item.template) ?? []), item]);
  for (const [template, group] of byTemplate)
    files.set(
      template,
      renderTemplate(
        group[0]!.source,
        group[0]!.cond,
        group.map((i) => i.object),
      ),
    );
  return { files, errors };
}

function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? listFiles(path, `${prefix}${name}/`) : [`${prefix}${name}`];
    });
}

/** The differences between the committed chart and the generator's: one line each. */
export function chartDifferences(root = ROOT): string[] {
  const { files, errors } = renderChart(root);
  if (errors.length) return errors.map(renderError);
  const dir = join(root, CHART_DIR);
  const committed = listFiles(dir);
  const out: string[] = [];
  for (const f of committed) if (!files.has(f)) out.push(`${CHART_DIR}/${f}: not generated (remove it)`);
  for (const [f, text] of files) {
    if (!committed.includes(f)) out.push(`${CHART_DIR}/${f}: missing`);
    else if (readFileSync(join(dir, f), 'utf8') !== text) out.push(`${CHART_DIR}/${f}: differs from the generator's output`);
  }
  return out;
}

function main(argv: string[]): number {
  if (argv.includes('--check')) {
    const diffs = chartDifferences();
    for (const d of diffs) process.stderr.write(`${d}\n`);
    if (diffs.length) process.stderr.write('run: npx tsx scripts/chart.ts\n');
    return diffs.length ? 1 : 0;
  }
  const { files, errors } = renderChart();
  if (errors.length) {
    for (const e of errors) process.stderr.write(`${renderError(e)}\n`);
    return 1;
  }
  const dir = join(ROOT, CHART_DIR);
  rmSync(dir, { recursive: true, force: true });
  for (const [f, text] of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  process.stdout.write(`wrote ${files.size} files to ${CHART_DIR}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
