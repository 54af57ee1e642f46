// The Dockerfile cannot be built here (no container engine); check its structure instead: the
// stages, pinned base images, a non-root final user, an entrypoint that exists after the build,
// and a build context that contains what it copies.
import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './load.js';

interface Instruction {
  op: string;
  args: string;
}

function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = parseDockerfile(text);
const args = new Map(instructions.filter((i) => i.op === 'ARG').map((i) => i.args.split('=') as [string, string]));
const resolve = (image: string): string => image.replace(/^\$\{(\w+)\}$/, (_, name: string) => args.get(name) ?? image);
const stages = instructions
  .filter((i) => i.op === 'FROM')
  .map((i) => {
    const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(i.args);
    return { image: resolve(m?.[1] ?? ''), name: m?.[2] ?? '' };
  });
const final = instructions.slice(instructions.findLastIndex((i) => i.op === 'FROM'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The Node.js line package.json pins for development and CI (node-line.test.ts): the image's too. */
const nodeMajor = (pkg.devDependencies.node ?? '').split('.')[0];

t.test('multi-stage: build, production dependencies, runtime', async (t) => {
  t.same(
    stages.map((s) => s.name),
    ['build', 'prod-deps', 'runtime'],
  );
  const runs = instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
  t.ok(
    runs.some((r) => /npm ci\b/.test(r) && !/--omit=dev/.test(r)),
    'the build stage installs dev dependencies',
  );
  t.ok(
    runs.some((r) => /npm run build/.test(r)),
    'the build stage compiles',
  );
  t.ok(
    runs.some((r) => /npm ci\b.*--omit=dev/.test(r)),
    'a stage installs production dependencies only',
  );
  t.notOk(
    final.some((i) => i.op === 'RUN'),
    'nothing runs in the runtime stage (it has no shell)',
  );
});

t.test('every base image is pinned to a version, never latest', async (t) => {
  for (const { image } of stages) {
    const ref = stages.some((s) => s.name === image) ? null : image;
    if (ref === null) continue;
    t.match(ref, /^[^$]+(:[\w.-]+|@sha256:[0-9a-f]{64})$/, `${ref} has a tag`);
    t.notMatch(ref, /:latest$/, `${ref} is not latest`);
  }
  t.equal(stages.at(-1)?.image, `gcr.io/distroless/nodejs${nodeMajor}-debian13:nonroot`, `distroless Node.js ${nodeMajor} runtime`);
  t.equal(stages[0]?.image, `node:${nodeMajor}-trixie-slim`, `Node.js ${nodeMajor} build stages on Debian 13, like the runtime`);
});

t.test('the runtime runs as a non-root user and starts the CLI the package declares', async (t) => {
  const user = final.filter((i) => i.op === 'USER').at(-1)?.args ?? '';
  t.match(user, /^[1-9]\d*(:[1-9]\d*)?$/, `USER ${user} is numeric and not 0 (runAsNonRoot can verify it)`);
  const entrypoint = JSON.parse(final.find((i) => i.op === 'ENTRYPOINT')?.args ?? 'null') as string[] | null;
  t.ok(Array.isArray(entrypoint), 'ENTRYPOINT in exec form');
  t.equal(entrypoint?.[1], pkg.bin.netattach, 'runs the package bin');
  t.ok(
    final.some((i) => i.op === 'COPY' && i.args.includes('/src/dist/src')),
    'copies the compiled sources',
  );
  t.ok(
    final.some((i) => i.op === 'COPY' && /^schemas\b/.test(i.args)),
    'copies schemas/ (loaded at run time)',
  );
  t.ok(
    final.some((i) => i.op === 'COPY' && /^package\.json\b/.test(i.args)),
    'copies package.json (ESM marker, schemas root)',
  );
  t.match(final.find((i) => i.op === 'EXPOSE')?.args, /^8443 8080$/);
});

t.test('the build context has what the Dockerfile copies and leaves out the rest', async (t) => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const must of ['node_modules', 'dist', '.git', 'certs']) t.ok(ignored.includes(must), `.dockerignore excludes ${must}`);
  const sources = instructions
    .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
  t.ok(sources.length >= 5);
  for (const src of sources) {
    t.ok(existsSync(join(ROOT, src)), `${src} exists`);
    t.notOk(ignored.includes(src), `${src} is not ignored`);
  }
});
