// The floor of this stack (issue 39): a bare fastify HTTPS route on the same Node.js, the same TLS
// settings as netattach's webhook port and the bench's Node flags. It parses the body as fastify
// does by default and answers a fixed AdmissionReview with a fixed JSON patch: what any webhook
// on fastify pays before it does any work of its own. `npm run bench` (http) runs it beside
// netattach and prints netattach's ratios to it.
//
//   node dist/bench/floor-server.js TLS_DIR    prints {"url": ...} once listening
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastify } from 'fastify';
import { MIN_TLS_VERSION, TLS12_CIPHERS } from '../src/server/tls.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: floor-server TLS_DIR');
const app = fastify({
  https: {
    cert: readFileSync(join(dir, 'tls.crt')),
    key: readFileSync(join(dir, 'tls.key')),
    minVersion: MIN_TLS_VERSION,
    ciphers: TLS12_CIPHERS,
  },
  bodyLimit: 3 * 1024 * 1024,
});
const patch = Buffer.from(
  JSON.stringify([{ op: 'add', path: '/spec/containers/0/resources/requests/intel.com~1sriov_a', value: '1' }]),
).toString('base64');
app.post('/mutate', async (request) => {
  const uid = (request.body as { request?: { uid?: string } } | undefined)?.request?.uid ?? '';
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true, patchType: 'JSONPatch', patch } };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`${JSON.stringify({ url: `https://127.0.0.1:${port}` })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
