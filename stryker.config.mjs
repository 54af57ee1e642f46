// Mutation testing of the pure core with StrykerJS (docs/mutation.md).
//
// The tap runner runs each test file as one node process (TypeScript through tsx), and counts a
// file as one test: only the files that cover a mutant run for it, and the first failing file
// kills it. NETATTACH_MUTATION_SCOPE picks parts of the core (comma-separated names of SCOPES
// below) with the test files that exercise them, so a 2-core machine can run the core part by
// part; without it every part runs. Results accumulate in the committed
// incremental file either way: a later run re-tests only mutants whose code or covering tests
// changed.
const SCOPES = {
  field: {
    mutate: ['src/field/errors.ts', 'src/field/path.ts'],
    tests: ['test/field/{errors,render}.test.ts'],
  },
  'policy-addresses': {
    mutate: ['src/policy/addresses.ts'],
    tests: ['test/policy/{engine,address-index,addresses}.test.ts'],
  },
  'policy-rules': {
    mutate: ['src/policy/rules.ts'],
    tests: ['test/policy/{engine,address-index,addresses,rules}.test.ts'],
  },
  'policy-engine': {
    mutate: ['src/policy/engine.ts'],
    tests: ['test/policy/{engine,address-index,load,matchers,evaluate}.test.ts'],
  },
  nads: {
    mutate: ['src/nads/{cni,validate,names,annotations,json-position,model}.ts'],
    tests: ['test/nads/{annotations,cni,documents,examples,model,names,static-source,validate}.test.ts'],
  },
  annotation: {
    mutate: ['src/annotation/*.ts', '!src/annotation/{index,types}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip}.test.ts'],
  },
  admission: {
    mutate: ['src/admission/*.ts', '!src/admission/{index,types}.ts'],
    tests: ['test/admission/{decode,nads,networks,plan,pod-mutate,pod-validate,response,workloads}.test.ts'],
  },
  pipeline: {
    mutate: ['src/server/pipeline.ts'],
    tests: ['test/server/{pipeline,contract,real-core}.test.ts'],
  },
};

const chosen = process.env.NETATTACH_MUTATION_SCOPE ? process.env.NETATTACH_MUTATION_SCOPE.split(',') : Object.keys(SCOPES);
for (const name of chosen) if (!SCOPES[name]) throw new Error(`NETATTACH_MUTATION_SCOPE: unknown part "${name}" (one of ${Object.keys(SCOPES).join(', ')})`);
const parts = chosen.map((name) => SCOPES[name]);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'tap',
  tap: {
    testFiles: [...new Set(parts.flatMap((p) => p.tests))],
    nodeArgs: ['--import', 'tsx', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  // No TypeScript checker: on the shared 2-core machine it cost more than the test runs it saves
  // (docs/mutation.md). tsx does not type-check, so a mutant that would not compile is run like
  // any other (a survivor of that kind would be listed as such in docs/mutation.md).
  checkers: [],
  coverageAnalysis: 'perTest',
  mutate: parts.flatMap((p) => p.mutate),
  ignorePatterns: ['dist', 'reports', 'certs', 'bench', 'test/e2e', '.git'],
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // A shared 2-core machine: one test runner and one checker; generous timeouts.
  concurrency: 2,
  dryRunTimeoutMinutes: 30,
  timeoutMS: 15000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
