// The logging the policy adapters need; pino's Logger satisfies it.
export interface PolicyLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  /** Routine events a busy cluster has hundreds of per second (a Lease released as its pod ends). */
  debug?(obj: object, msg: string): void;
}

export const SILENT: PolicyLogger = { info() {}, warn() {}, error() {} };
