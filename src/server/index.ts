export { createServer, type WebhookServer } from './server.js';
export type {
  AdmissionCore,
  BackgroundTask,
  ConnectionLimits,
  DraSource,
  ServerDeps,
  ServerOptions,
  TlsFiles,
  ReadinessCheck,
  WatchHealth,
} from './types.js';
export { createLogger, LOG_LEVELS, type LogLevel } from './logger.js';
export { handleReview, internalErrorReview, type PipelineDeps, type PipelineResult } from './pipeline.js';
export { createMetrics, type ServerMetrics } from './metrics.js';
export { parseGoDuration, lookupBudgetMs } from './deadline.js';
export { loadTlsMaterial } from './tls.js';
export { watchCheck, verboseText, type Readiness } from './health-app.js';
export { HEAP_DEGRADED_RATIO, heapCheck, heapRatio, heapUse, type HeapUse } from './heap.js';
