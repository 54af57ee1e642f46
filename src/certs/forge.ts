// node-forge (~1.5 MB of heap), required when a pair is generated, not imported: a server whose
// certificate is mounted never loads it (issue 39). The kubectl plugin's bundle has no
// node_modules to require from: scripts/build-plugin.ts swaps this module for a static import.
import { createRequire } from 'node:module';
import type forgeTypes from 'node-forge';

export type Forge = typeof forgeTypes;

let loaded: Forge | undefined;

/** The node-forge package, required on the first call. */
export const forge = (): Forge => (loaded ??= createRequire(import.meta.url)('node-forge') as Forge);
