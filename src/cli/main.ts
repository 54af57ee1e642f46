#!/usr/bin/env node
// Entry point: `netattach <command> ...`. Each command lives in its own module, loaded on
// demand so that `netattach parse` does not pay for fastify or the Kubernetes client.
import { processIO, EXIT_USAGE, type CliIO, type Command } from './io.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ run: Command }> }> = {
  parse: { summary: 'parse and validate a networks annotation value', load: () => import('./parse.js') },
  serve: { summary: 'run the admission webhook (HTTPS)', load: () => import('./serve.js') },
  certs: { summary: 'generate a CA and a serving certificate for the webhook', load: () => import('./certs.js') },
  check: { summary: 'lint manifests offline with the webhook rules', load: () => import('./check.js') },
  audit: { summary: 'judge running pods (cluster or files) with the webhook rules', load: () => import('./audit.js') },
  kubectl: {
    summary: "the kubectl plugin: 'netattach kubectl explain ...' is 'kubectl netattach explain ...'",
    load: () => import('./kubectl.js'),
  },
};

/** Installed as `kubectl-netattach` (npm's bin link, krew, a symlink on PATH), the CLI is the kubectl plugin. */
export const PLUGIN_NAME = /(?:^|[\\/])kubectl-netattach(?:\.(?:js|cmd|exe))?$/;

export function usage(): string {
  const lines = ['Usage: netattach <command> [options]', '', 'Commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(8)} ${c.summary}`);
  lines.push(
    '',
    "Run 'netattach <command> --help' for a command's options.",
    "As a kubectl plugin (installed as kubectl-netattach): 'kubectl netattach --help'.",
  );
  return lines.join('\n') + '\n';
}

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`netattach: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const { run } = await command.load();
  return run(rest, io);
}

/**
 * The command line `main` gets when the script runs as `invokedAs`: the plugin's when named for it,
 * the CLI's as `netattach` (or main.js); undefined when imported (tests).
 */
export function entryArgs(invokedAs: string, args: readonly string[]): string[] | undefined {
  if (PLUGIN_NAME.test(invokedAs)) return ['kubectl', ...args];
  return /(?:^|[\\/])(?:main\.(?:js|ts)|netattach)$/.test(invokedAs) ? [...args] : undefined;
}

const entry = entryArgs(process.argv[1] ?? '', process.argv.slice(2));
if (entry) {
  main(entry, processIO()).then(
    (code) => {
      // serve keeps running: it returns only when it has shut down.
      process.exitCode = code;
      // The plugin is done once it has said its answer: exit then (stdout and stderr flushed), not
      // when a module load it no longer needs or a read it gave up on settles.
      if (entry[0] === 'kubectl') process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
    },
    (err: unknown) => {
      process.stderr.write(`netattach: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT_USAGE;
    },
  );
}
