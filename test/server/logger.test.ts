// Log lines are capped whatever a caller passes (issue 15, finding 6): a NAD with 80,000 plugins
// wrote a 12.3 MB line, a 240 KB NAD file a 31.7 MB warning.
import t from 'tap';
import { Writable } from 'node:stream';
import { capFields, createLogger, MAX_LOG_ITEMS, MAX_LOG_STRING } from '../../src/server/logger.js';

function capture() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { logger: createLogger('info', stream), raw };
}

t.test('long strings are cut, long arrays shortened, with the counts given', async (t) => {
  const { logger, raw } = capture();
  logger.warn(
    {
      nad: 'ns/n',
      problems: Array.from({ length: 80_000 }, (_, i) => `spec.config.plugins[${i}].type: Required value ${'x'.repeat(100)}`),
      config: 'y'.repeat(2_000_000),
    },
    'NAD has problems',
  );
  t.equal(raw.length, 1);
  t.ok(raw[0]!.length < 64 * 1024, `line of ${raw[0]!.length} bytes`);
  const line = JSON.parse(raw[0]!) as { problems: string[]; config: string; nad: string; msg: string };
  t.equal(line.nad, 'ns/n');
  t.equal(line.msg, 'NAD has problems');
  t.equal(line.problems.length, MAX_LOG_ITEMS + 1);
  t.equal(line.problems[MAX_LOG_ITEMS], `...and ${80_000 - MAX_LOG_ITEMS} more`);
  t.equal(line.config.length, MAX_LOG_STRING + '...(2000000 characters)'.length);
  t.match(line.config, /\.\.\.\(2000000 characters\)$/);
});

t.test('nested values are capped too, deep ones replaced; small fields are passed as they are', async (t) => {
  const small = { uid: 'u', rules: ['a', 'b'], n: 3 };
  t.equal(capFields(small).uid, 'u');
  t.same(capFields(small), small);
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 10; i++) deep = { deep };
  const capped = capFields({ deep, wide: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'z'.repeat(5000)])) });
  t.match(JSON.stringify(capped), /nested too deep for the log/);
  const wide = capped.wide as Record<string, unknown>;
  t.equal(Object.keys(wide).length, MAX_LOG_ITEMS * 2 + 1);
  t.equal(wide.moreFields, 100 - MAX_LOG_ITEMS * 2);
  t.ok(JSON.stringify(capped).length < 64 * 1024);
});
