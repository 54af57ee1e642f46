// Public face of src/yaml: the `yaml` package, loaded on first use. yaml is 72 modules and ~0.7 MB
// of heap, and a server whose files are JSON, or that reads the cluster with in-cluster
// credentials, never parses YAML (issue 39). A require (yaml's Node build is CommonJS) keeps the
// callers synchronous, as the import did. The kubectl plugin's bundle has no node_modules to require
// from: scripts/build-plugin.ts swaps this module for a static import.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

export type YamlModule = typeof Yaml;

let loaded: YamlModule | undefined;

/** The yaml package, required on the first call. */
export const yaml = (): YamlModule => (loaded ??= createRequire(import.meta.url)('yaml') as YamlModule);
