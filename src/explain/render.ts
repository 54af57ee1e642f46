// The explanation for a terminal, in `kubectl describe`'s manner: `Field:  value` lines, indented
// sections, and `kubectl get`-style tables where there are rows. Every line comes from the
// Explanation; nothing is decided here.
import { oneLineSafe, renderError } from '../field/index.js';
import type { Answer, Explanation, RequestedValue } from './types.js';

/** Columns padded to their widest cell, two spaces apart, the last one free. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, indent = ''): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** What a requested value's reach says, in words. */
export function readerText(r: RequestedValue): string {
  switch (r.status) {
    case 'read':
      return `read by ${r.by}`;
    case 'ignored':
      return 'read by no plugin of the chain';
    case 'unknown':
      return `unknown: ${r.types?.join(', ')} not in the plugin table`;
    case 'unchecked':
      return 'unchecked: the NAD has no readable CNI config';
  }
}

/** A webhook's answer in one line; `when` says at what moment (the VM's: at kubectl apply). */
function answerLine(a: Answer, when = ''): string {
  if (a.verdict === 'skipped') return `would be admitted without netattach: ${a.skipped}`;
  if (a.verdict === 'denied') return `would be denied${when} (${a.errors.length} error${a.errors.length === 1 ? '' : 's'})`;
  return a.warnings.length > 0
    ? `would be allowed${when}, with ${a.warnings.length} warning${a.warnings.length === 1 ? '' : 's'}`
    : `would be allowed${when}`;
}

/** The one-line answer: what admission would do with this pod now. */
export const verdictLine = (e: Explanation): string => answerLine(e.admission);

export function renderExplanation(e: Explanation, options: { wide?: boolean } = {}): string {
  const out: string[] = [];
  out.push(`Name:       ${e.pod.name}`, `Namespace:  ${e.pod.namespace}`, `Source:     ${e.pod.source}`, `Admission:  ${verdictLine(e)}`);
  if (e.vm) {
    // The VM webhook's answer to the object itself, at its paths; the rest is the launcher pod's.
    const v = e.vm;
    out.push(`${v.kind}: ${v.name} ${answerLine(v, ' at kubectl apply')}`);
    for (const err of v.errors) out.push(`  error: ${renderError(err)}`);
    for (const w of v.warnings) out.push(`  warning: ${w}`);
    out.push(`Below: its virt-launcher pod, as KubeVirt renders it (paths are the pod's).`);
  }

  out.push('Networks:');
  if (e.networks.length === 0) out.push('  <none>');
  for (const n of e.networks) {
    out.push(`  ${n.selection}${n.annotation === 'default-network' ? ' (default network)' : ''}:`);
    if (n.nad.status === 'not-found') out.push('    NAD:       not found');
    else {
      const chain = n.nad.chain?.map((p) => (p.ipam ? `${p.type} (ipam ${p.ipam})` : p.type)).join(' -> ');
      out.push(`    NAD:       ${n.selection.split('@')[0]}`, `    Chain:     ${chain ?? '<no readable CNI config: read from the node>'}`);
      if (options.wide && n.nad.chain)
        for (const p of n.nad.chain)
          out.push(`      ${p.path}: ${p.type}${p.capabilities.length ? ` capabilities ${p.capabilities.join(',')}` : ''}`);
      for (const p of n.nad.problems ?? []) out.push(`    Problem:   ${p}`);
    }
    if (n.device) {
      out.push(`    Device:    ${n.device.summary}`);
      for (const p of n.device.problems) out.push(`    Missing:   ${p}`);
    }
    if (n.requested.length > 0)
      out.push(
        ...table(
          ['REQUESTED', 'READER'],
          n.requested.map((r) => [r.field, readerText(r)]),
          '    ',
        ),
      );
  }

  out.push('Policies:');
  for (const p of e.policies) {
    if (p.status !== 'applies' && !options.wide) {
      out.push(`  ${p.name}: ${p.status === 'exempt' ? 'namespace exempt' : 'not selected (namespaceSelector)'}`);
      continue;
    }
    out.push(`  ${p.name}:${p.status === 'applies' ? '' : ` ${p.status}`}`);
    if (p.rules.length === 0) out.push('    <no rules>');
    else
      out.push(
        ...table(
          ['RULE', 'ACTION', 'VERDICT'],
          p.rules.map((r) => [r.rule, r.action, r.verdict]),
          '    ',
        ),
      );
    for (const r of p.rules) for (const m of r.messages) out.push(`    ${r.rule}: ${m}`);
  }

  out.push(
    `Audit:      ${e.audit.status === 'judged' ? (e.audit.findings.length === 0 ? 'clean' : `${e.audit.findings.length} finding${e.audit.findings.length === 1 ? '' : 's'}`) : `${e.audit.status}: ${e.audit.reason}`}`,
  );
  if (e.audit.findings.length > 0)
    out.push(
      ...table(
        ['POLICY', 'RULE', 'RESULT', 'ACTION', 'MESSAGE'],
        e.audit.findings.map((f) => [f.policy, f.rule, f.result, f.action, f.message]),
        '  ',
      ),
    );

  const a = e.admission;
  out.push('Mutation:');
  const containers = Object.entries(a.mutation.resources);
  if (containers.length === 0 && a.mutation.resourceClaims.length === 0 && !a.mutation.nodeSelector) out.push('  <none>');
  const pairs = (m?: Record<string, string>): string =>
    Object.entries(m ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
  for (const [c, r] of containers)
    out.push(
      `  container ${c}: ${[r.requests && `requests ${pairs(r.requests)}`, r.limits && `limits ${pairs(r.limits)}`].filter(Boolean).join('; ')}`,
    );
  if (a.mutation.resourceClaims.length > 0) out.push(`  resourceClaims: ${a.mutation.resourceClaims.join(', ')}`);
  if (a.mutation.nodeSelector) out.push(`  nodeSelector: ${pairs(a.mutation.nodeSelector)}`);

  if (a.errors.length + a.warnings.length > 0) out.push('Messages:');
  for (const err of a.errors) out.push(`  error: ${renderError(err)}`);
  for (const w of a.warnings) out.push(`  warning: ${w}`);
  // Each entry is one line: a line break inside a value from the cluster is shown, not followed.
  return out.map(oneLineSafe).join('\n') + '\n';
}

/** 0 when admission would let the pod in (allowed or not seen), 1 when it would deny it. */
export const explainExitCode = (e: Explanation): number => (e.admission.verdict === 'denied' ? 1 : 0);
