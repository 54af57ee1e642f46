// Untrusted JSON text: limits checked before parsing.
export { jsonShapeProblem, type ShapeLimits } from './shape.js';
