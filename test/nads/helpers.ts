// Shared by the source tests: NAD objects, a recording logger, polling for eventual state.
import type { NadLogger } from '../../src/nads/index.js';

export function nadObject(
  namespace: string,
  name: string,
  extra: { resourceVersion?: string; resourceName?: string; config?: string } = {},
): Record<string, unknown> {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: {
      namespace,
      name,
      uid: `uid-${namespace}-${name}`,
      resourceVersion: extra.resourceVersion ?? '1',
      ...(extra.resourceName ? { annotations: { 'k8s.v1.cni.cncf.io/resourceName': extra.resourceName } } : {}),
    },
    spec: { config: extra.config ?? JSON.stringify({ cniVersion: '1.0.0', name, type: 'macvlan', capabilities: { mac: true } }) },
  };
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

export function recordingLogger(): NadLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Polls until `check` holds (or fails after `ms`): watchers and informers are asynchronous. */
export async function eventually(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
