// Public face of src/contracts: the types every layer shares, and nothing else (a leaf).
export * from './admission-review.js';
