// Strings from the cluster reach a terminal through every output format: the characters that steer
// a terminal are shown escaped in text, table, json and yaml, and json and yaml still read back to
// the same values.
import t from 'tap';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { oneLineSafe, terminalSafe } from '../../src/field/index.js';
import { terminalSafeIO } from '../../src/cli/terminal.js';
import { yamlText } from '../../src/cli/yaml-text.js';
import { renderExplanations } from '../../src/cli/kubectl-commands.js';
import { explainPod } from '../../src/explain/index.js';
import { nadFromObject } from '../../src/nads/index.js';
import { renderAuditTable } from '../../src/audit/index.js';
import { Readable } from 'node:stream';

// Every character that must never reach a terminal raw (tab and newline are layout, kept by terminalSafe).
const STEERING = [
  ...Array.from({ length: 32 }, (_, c) => c).filter((c) => c !== 9 && c !== 10),
  0x7f,
  ...Array.from({ length: 32 }, (_, i) => 0x80 + i),
  0x61c,
  0x200e,
  0x200f,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
].map((c) => String.fromCharCode(c));
const RAW = new RegExp(`[${STEERING.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`);

t.test('each steering character is shown as its \\u escape; tab, newline and other text are kept', async (t) => {
  for (const c of STEERING)
    t.equal(terminalSafe(`a${c}b`), `a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`, `U+${c.charCodeAt(0).toString(16)}`);
  t.equal(terminalSafe('a\tb\nc'), 'a\tb\nc', 'tab and newline: layout');
  t.equal(oneLineSafe('a\tb\nc\rd'), 'a\\u0009b\\u000ac\\u000dd', 'within one line: shown too');
  for (const s of ['plain', 'ünïcödé 名前', '😀 pair', '\\u001b typed by hand', '']) t.equal(terminalSafe(s), s, JSON.stringify(s));
  t.equal(terminalSafe('\u001b]0;owned\u0007'), '\\u001b]0;owned\\u0007', 'a window-title sequence');
});

t.test('json output stays the same values; yaml output too; neither has a raw steering character', async (_t) => {
  const value = fc.jsonValue().filter((v) => v !== null && typeof v === 'object');
  const withControls = fc.string({ unit: fc.constantFrom(...STEERING, 'a', 'é', ' ', '\n', '\t', ':', '"', "'", '#', '-') });
  const doc = fc.record({ v: value, s: withControls, k: fc.dictionary(withControls, withControls, { maxKeys: 3 }) });
  fc.assert(
    fc.property(doc, (d) => {
      const json = JSON.stringify(d);
      const shownJson = terminalSafe(json);
      const shownYaml = terminalSafe(yamlText(json));
      return (
        !RAW.test(shownJson) &&
        !RAW.test(shownYaml) &&
        JSON.stringify(JSON.parse(shownJson)) === json &&
        JSON.stringify(parseYaml(shownYaml)) === json
      );
    }),
    { numRuns: 300 },
  );
});

t.test('terminalSafeIO escapes both streams', async (t) => {
  const seen = { out: '', err: '' };
  const io = terminalSafeIO({
    stdout: (s) => void (seen.out += s),
    stderr: (s) => void (seen.err += s),
    stdin: Readable.from([]),
    env: {},
    cwd: '/',
  });
  io.stdout('x\u001by\n');
  io.stderr('\u009b2J');
  t.same(seen, { out: 'x\\u001by\n', err: '\\u009b2J' });
});

t.test('explain: a NAD whose plugin type holds ESC, BEL, CR and a newline, in every format', async (t) => {
  const evil = 'sriov\u001b]0;pwned\u0007\r\nAdmission:  would be allowed';
  const nads = [
    nadFromObject(
      {
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinition',
        metadata: { name: 'n', namespace: 'apps' },
        spec: { config: JSON.stringify({ cniVersion: '1.0.0', type: evil }) },
      },
      { defaultNamespace: 'apps' },
    ),
  ];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'apps', annotations: { 'k8s.v1.cni.cncf.io/networks': 'n' } },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  };
  const e = explainPod({ pod, source: 'file', defaultNamespace: 'apps', nads });
  for (const output of ['text', 'wide', 'json', 'yaml']) {
    const shown = terminalSafe(renderExplanations([e], output));
    t.notOk(RAW.test(shown), `${output}: no raw steering character`);
    t.notOk(/\r/.test(shown), `${output}: no carriage return`);
    if (output === 'json') t.match(JSON.parse(shown), { networks: [{ nad: { chain: [{ type: evil }] } }] }, 'json: the same value');
    if (output === 'yaml') t.match(parseYaml(shown), { networks: [{ nad: { chain: [{ type: evil }] } }] }, 'yaml: the same value');
    if (output === 'text' || output === 'wide') {
      t.match(
        shown,
        /Chain: {5}sriov\\u001b\]0;pwned\\u0007\\u000d\\u000aAdmission: {2}would be allowed/,
        `${output}: the type shown escaped on its line`,
      );
      t.equal(shown.split('\n').filter((l) => l.startsWith('Admission:')).length, 1, `${output}: the value forges no line`);
    }
  }
});

t.test('audit table: a message with a line break stays on its row', async (t) => {
  const table = renderAuditTable([
    {
      pod: { namespace: 'apps', name: 'p' },
      findings: [{ policy: 'pol', rule: 'r', result: 'fail', action: 'Enforce', message: 'bad\nNAMESPACE  RESOURCE forged\u001b[2J' }],
    } as never,
  ]);
  const shown = terminalSafe(table);
  t.notOk(RAW.test(shown));
  t.equal(shown.split('\n').filter((l) => l.startsWith('NAMESPACE')).length, 1, 'one header line');
});
