// `netattach certs`: writes a CA and a serving certificate for the webhook Service and prints
// the caBundle (base64 of ca.crt) for the webhook configurations.
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EXIT_OK, EXIT_USAGE, parseCommandLine, type CliIO } from './io.js';
import { generateCertificates, writeCertificateSet, readCa, caBundle, CERT_FILES } from '../certs/index.js';

const HELP = `Usage: netattach certs --out DIR [options]

Writes ca.crt, ca.key (0600), tls.crt and tls.key (0600) into DIR and prints the
caBundle (base64 of ca.crt) on stdout. A CA already in DIR (ca.crt + ca.key) is reused,
so renewing keeps the caBundle of the webhook configurations valid.

Options:
  --out DIR          directory to write (created if missing)            (required)
  --service NAME     Service name of the webhook                        (netattach)
  --namespace NS     namespace of the Service                           (netattach-system)
  --san NAME|IP      extra DNS name or IP address (repeatable)
  --days N           validity of the serving certificate, days          (365)
  --ca-days N        validity of a new CA, days                         (3650)
  --new-ca           create a new CA even if DIR holds one
  --force            overwrite an existing tls.crt/tls.key
  -h, --help         show this help
`;

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1 || n > 36500) {
    throw new RangeError(`--${name}: invalid value ${JSON.stringify(text)}: must be a whole number of days between 1 and 36500`);
  }
  return n;
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCommandLine('certs', HELP, io, {
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      out: { type: 'string' },
      service: { type: 'string', default: 'netattach' },
      namespace: { type: 'string', default: 'netattach-system' },
      san: { type: 'string', multiple: true, default: [] },
      days: { type: 'string' },
      'ca-days': { type: 'string' },
      'new-ca': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  if (!values.out) {
    io.stderr(`netattach certs: --out DIR is required\n\n${HELP}`);
    return EXIT_USAGE;
  }
  try {
    const days = positiveInt('days', values.days, 365);
    const caDays = positiveInt('ca-days', values['ca-days'], 3650);
    const out = resolve(io.cwd, values.out);
    if (!values.force && ((await exists(join(out, CERT_FILES.cert))) || (await exists(join(out, CERT_FILES.key))))) {
      io.stderr(`netattach certs: ${join(out, CERT_FILES.cert)} already exists; pass --force to replace it\n`);
      return EXIT_USAGE;
    }
    const ca = values['new-ca'] ? undefined : await readCa(out);
    const set = generateCertificates({ service: values.service, namespace: values.namespace, sans: values.san, days, caDays, ca });
    const files = await writeCertificateSet(out, set);
    io.stderr(
      `${ca ? 'signed with the existing CA in' : 'created a new CA in'} ${out}\nwrote ${files.join(', ')}\ncaBundle follows on stdout\n`,
    );
    io.stdout(caBundle(set.caCert) + '\n');
    return EXIT_OK;
  } catch (err) {
    io.stderr(`netattach certs: ${(err as Error).message}\n`);
    return EXIT_USAGE;
  }
}
