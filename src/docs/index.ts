// Public face of src/docs: the generated blocks of the docs (the generators' shared helpers).
export { replaceGenerated, writeGenerated } from './generated.js';
