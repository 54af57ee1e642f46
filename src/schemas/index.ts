// Public face of src/schemas: the repository's JSON Schemas, read from schemas/.
export { loadSchema, schemasDirectory } from './load.js';
