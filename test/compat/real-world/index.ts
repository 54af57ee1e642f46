// The real-world corpus: every case, by source.
import { CNI_PROJECTS } from './cni-projects.js';
import { MORE } from './more.js';
import { MULTUS } from './multus.js';
import { VENDORS } from './vendors.js';
import { WORKLOADS } from './workloads.js';
import type { RealWorldCase } from './types.js';

export const REAL_WORLD: readonly RealWorldCase[] = [...MULTUS, ...CNI_PROJECTS, ...VENDORS, ...WORKLOADS, ...MORE];

/** The repository of a case's source (`owner/repo`). */
export const repositoryOf = (c: RealWorldCase): string => c.source.split('@')[0]!;
