// Mutation testing of the pure core with StrykerJS (docs/mutation.md), one part per run:
// `npm run test:mutation` (scripts/mutation.mjs) runs Stryker once per part, with the part's name
// in NETATTACH_MUTATION_PART. The parts, their source files and test files are in
// stryker.parts.mjs.
//
// The tap runner runs each test file as one node process (TypeScript through tsx), and counts a
// file as one test: only the files that cover a mutant run for it, and the first failing file
// kills it. Results accumulate in the part's committed incremental file: a later run re-tests only
// mutants whose code or covering tests changed.
import { SCOPES } from './stryker.parts.mjs';

const part = process.env.NETATTACH_MUTATION_PART;
if (!part || !SCOPES[part]) {
  throw new Error(`NETATTACH_MUTATION_PART must name one part (${Object.keys(SCOPES).join(', ')}): run npm run test:mutation`);
}
const { mutate, tests } = SCOPES[part];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'tap',
  tap: {
    testFiles: tests,
    nodeArgs: ['--import', 'tsx', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  // No TypeScript checker: on the shared 2-core machine it cost more than the test runs it saves
  // (docs/mutation.md). tsx does not type-check, so a mutant that would not compile is run like
  // any other (a survivor of that kind would be listed as such in docs/mutation.md).
  checkers: [],
  coverageAnalysis: 'perTest',
  mutate,
  // Anchored: an unanchored 'certs' also dropped src/certs from the sandbox.
  // '/.stryker-tmp': each part has its own temp dir below it, and Stryker ignores only its own: two
  // parts run at once would copy each other's sandboxes.
  ignorePatterns: ['/dist', '/reports', '/certs', '/bench', '/test/e2e', '.git', '/.stryker-tmp'],
  incremental: true,
  incrementalFile: `reports/stryker-incremental/${part}.json`,
  // A shared 2-core machine: two test-runner processes; generous timeouts.
  concurrency: 2,
  dryRunTimeoutMinutes: 30,
  timeoutMS: 15000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${part}.html` },
  jsonReporter: { fileName: `reports/mutation/${part}.json` },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: `.stryker-tmp/${part}`,
  cleanTempDir: 'always',
};
