// What the CLI prints reaches a terminal, and much of it comes from the cluster: NAD names and
// CNI configs, messages quoting annotation values, policy names. A namespace user who may create a
// NAD chooses those bytes, so an ESC or a C1 control in a plugin `type` must not rewrite the
// terminal of whoever runs `explain` (a window title, hidden text, a fake prompt). Every output
// passes through here and shows such characters escaped; the escapes are valid JSON (and YAML in
// double quotes, see yaml-text.ts), so json and yaml output still parse to the same values. The
// YAML writer lives apart: `kubectl netattach --help` passes through here and needs no YAML.
import { terminalSafe } from '../field/index.js';
import type { CliIO } from './io.js';

/** An IO whose stdout and stderr show terminal-steering characters escaped. */
export const terminalSafeIO = (io: CliIO): CliIO => ({
  ...io,
  stdout: (text) => io.stdout(terminalSafe(text)),
  stderr: (text) => io.stderr(terminalSafe(text)),
});
