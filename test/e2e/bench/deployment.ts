/**
 * What the e2e benches (apiserver.ts, nri.ts, scale.ts) read of the Deployment and of the
 * cluster's processes: the environment netattach is run with, and the pids of etcd and
 * kube-apiserver for their CPU.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseManifests } from '../infra/webhook.js';
import { REPO } from '../lib/netattach.js';

type Obj = Record<string, unknown>;

/** The Deployment's literal environment (manifests/base/deployment.yaml): NODE_OPTIONS, MALLOC_ARENA_MAX. */
export function deploymentEnv(): Record<string, string> {
  const docs = parseManifests(readFileSync(path.join(REPO, 'manifests/base/deployment.yaml'), 'utf8'));
  const containers = ((docs[0]!.spec as Obj).template as { spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> } })
    .spec.containers;
  return Object.fromEntries((containers[0]?.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

/** Pid of the process whose command line names `exe` and holds `marker` (the cluster's work dir). */
export function pidOf(exe: string, marker: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (path.basename(cmd[0] ?? '') === exe && cmd.some((a) => a.includes(marker))) return Number(d);
    } catch {
      /* gone */
    }
  }
  return undefined;
}
