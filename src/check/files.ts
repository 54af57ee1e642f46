// The I/O edge of `check`: PATH arguments -> manifest texts. Files are read as given (any
// extension); directories recursively, taking `.yaml`, `.yml` and `.json` files in sorted
// order and skipping dot-files and dot-directories (.git); `-` is stdin. Whatever cannot be read
// becomes a ReadError and the rest is still read.
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { parseManifests } from './parse.js';
import type { ParsedManifests, ReadError } from './types.js';

export const STDIN_NAME = '<stdin>';
const EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

export interface InputText {
  file: string;
  text: string;
}

export async function readInputs(
  paths: readonly string[],
  readStdin: () => Promise<string>,
): Promise<{ inputs: InputText[]; errors: ReadError[] }> {
  const inputs: InputText[] = [];
  const errors: ReadError[] = [];
  const visited = new Set<string>();
  for (const path of paths) {
    if (path === '-') {
      inputs.push({ file: STDIN_NAME, text: await readStdin() });
      continue;
    }
    await visit(path, true, inputs, errors, visited);
  }
  return { inputs, errors };
}

async function visit(path: string, explicit: boolean, inputs: InputText[], errors: ReadError[], visited: Set<string>): Promise<void> {
  try {
    const info = await stat(path); // follows symlinks
    if (info.isDirectory()) {
      const real = await realpath(path);
      if (visited.has(real)) return; // a symlink loop, or the same directory named twice
      visited.add(real);
      const entries = (await readdir(path)).filter((n) => !n.startsWith('.')).sort();
      for (const name of entries) {
        const child = join(path, name);
        const childInfo = await stat(child).catch(() => undefined);
        if (childInfo?.isDirectory() || EXTENSIONS.has(extname(name).toLowerCase())) await visit(child, false, inputs, errors, visited);
      }
      return;
    }
    if (!info.isFile() && !explicit) return;
    inputs.push({ file: path, text: await readFile(path, 'utf8') });
  } catch (e) {
    errors.push({ file: path, message: `cannot read: ${describeIoError(e)}` });
  }
}

function describeIoError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    default:
      return err?.code ?? (e instanceof Error ? e.message : String(e));
  }
}

/** Reads and parses every input; parse errors join the read errors. */
export async function loadManifests(paths: readonly string[], stdin: Readable | (() => Promise<string>)): Promise<ParsedManifests> {
  const readStdin = typeof stdin === 'function' ? stdin : () => readStream(stdin);
  const { inputs, errors } = await readInputs(paths, readStdin);
  const out: ParsedManifests = { objects: [], errors };
  for (const { file, text } of inputs) {
    const parsed = parseManifests(text, file);
    out.objects.push(...parsed.objects);
    out.errors.push(...parsed.errors);
  }
  return out;
}

async function readStream(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
