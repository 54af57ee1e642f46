// Public face of src/explain: one pod explained with the webhook's own parts (`kubectl netattach explain`).
export { explainPod, heldAsServeHolds, type ExplainInput } from './explain.js';
export { explainExitCode, readerText, renderExplanation, table, verdictLine } from './render.js';
export * from './types.js';
