// Placeholder until the certs command lands (being written now); replaced, not shipped.
import { EXIT_USAGE, type CliIO } from './io.js';

export async function run(_argv: string[], io: CliIO): Promise<number> {
  io.stderr('netattach certs: not available in this build\n');
  return EXIT_USAGE;
}
