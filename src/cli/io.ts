// The CLI's only contact with the process: commands take an IO and return an exit code,
// so tests can run them in-process and read what they printed.
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
