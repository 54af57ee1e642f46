// JSON logs with pino. Nothing logs whole objects or key material: log calls pass chosen fields.
// Fields can still carry user input (rendered field errors, NAD problems, paths): every line is
// capped here, so one hostile object cannot write megabytes of log (the NAD sources and policy
// adapters log through this logger too).
import { pino, type Logger, type DestinationStream } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Longest string field in a log line; longer ones are cut and their length given. */
export const MAX_LOG_STRING = 1024;
/** Most items of an array field; the rest are counted in one last item. */
export const MAX_LOG_ITEMS = 20;
/** Deepest nesting of a field kept; deeper values are replaced by a note. */
const MAX_LOG_DEPTH = 4;

function capValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_LOG_STRING ? `${value.slice(0, MAX_LOG_STRING)}...(${value.length} characters)` : value;
  }
  if (typeof value !== 'object' || value === null || value instanceof Error) return value;
  if (depth >= MAX_LOG_DEPTH) return '[nested too deep for the log]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_LOG_ITEMS).map((v) => capValue(v, depth + 1));
    if (value.length > MAX_LOG_ITEMS) kept.push(`...and ${value.length - MAX_LOG_ITEMS} more`);
    return kept;
  }
  return capFields(value as Record<string, unknown>, depth + 1);
}

/** The fields of a log line with long strings cut, long arrays shortened (counts given) and deep values dropped. */
export function capFields(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  let n = 0;
  for (const key of Object.keys(fields)) {
    if (++n > MAX_LOG_ITEMS * 2) {
      out ??= { ...fields };
      delete out[key];
      continue;
    }
    const v = fields[key];
    const capped = capValue(v, depth);
    if (capped !== v) {
      out ??= { ...fields };
      out[key] = capped;
    }
  }
  if (n > MAX_LOG_ITEMS * 2) out!.moreFields = n - MAX_LOG_ITEMS * 2;
  return out ?? fields;
}

export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { name: 'netattach' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: (fields: Record<string, unknown>) => capFields(fields) },
  };
  return destination ? pino(options, destination) : pino(options);
}
