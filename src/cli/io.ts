// The CLI's only contact with the process: commands take an IO and return an exit code,
// so tests can run them in-process and read what they printed.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Readable } from 'node:stream';

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: Readable;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export type Command = (argv: string[], io: CliIO) => Promise<number>;

export const processIO = (): CliIO => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
});

/** Reads all of a stream as UTF-8 text. */
export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Exit codes shared by every command. */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

/**
 * Parses a command's options the way every command does: a usage error is printed with the
 * usage text and gives EXIT_USAGE, `--help` prints the usage and gives EXIT_OK. Either way the
 * caller gets a number to return; otherwise the parsed options.
 */
export function parseCommandLine<T extends ParseArgsConfig>(
  command: string,
  usage: string,
  io: CliIO,
  config: T,
): ReturnType<typeof parseArgs<T>> | number {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    io.stderr(`netattach ${command}: ${e instanceof Error ? e.message : String(e)}\n\n${usage}`);
    return EXIT_USAGE;
  }
  if ((parsed.values as { help?: boolean }).help) {
    io.stdout(usage);
    return EXIT_OK;
  }
  return parsed;
}
