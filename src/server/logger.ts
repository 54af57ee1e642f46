// JSON logs with pino. Nothing logs whole objects or key material: log calls pass chosen fields.
import { pino, type Logger, type DestinationStream } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const options = { level, base: { name: 'netattach' }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}
