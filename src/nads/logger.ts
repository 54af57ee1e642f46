// The slice of a pino logger the NAD sources use: structured fields first, message second.
export interface NadLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const noop = (): void => {};
export const silentLogger: NadLogger = { debug: noop, info: noop, warn: noop, error: noop };

/** What the sources report for metrics: one call per event, cheap and synchronous. */
export interface NadSourceEvent {
  type: 'sync' | 'add' | 'update' | 'delete' | 'error' | 'lookup';
  /** For `lookup`: cache-hit, found, not-found, not-found-remembered, unavailable; for `error`: list, watch, read. */
  outcome?: string;
}
export type NadSourceEventHandler = (event: NadSourceEvent) => void;
