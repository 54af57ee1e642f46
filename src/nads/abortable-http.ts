// An HttpLibrary for @kubernetes/client-node 1.3 that honours an AbortSignal: the generated
// clients' default library (node-fetch without a signal) cannot be cancelled, and a lookup on
// the admission path must give up after its deadline instead of lingering.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ResponseContext, wrapHttpLibrary, type HttpLibrary, type RequestContext } from '@kubernetes/client-node';

/** Largest response accepted (a list of 10,000 NADs is ~10-20 MB). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export function abortableHttpLibrary(signal: AbortSignal): HttpLibrary {
  return wrapHttpLibrary({ send: (req) => send(req, signal) });
}

function send(req: RequestContext, signal: AbortSignal): Promise<ResponseContext> {
  const url = new URL(req.getUrl());
  const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const headers = req.getHeaders();
  const agent = req.getAgent();
  return new Promise((resolve, reject) => {
    const r = request(url, { method: req.getHttpMethod().toString(), headers, signal, ...(agent ? { agent } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) res.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve(
          new ResponseContext(res.statusCode ?? 0, flatHeaders(res.headers), {
            text: async () => body.toString('utf8'),
            binary: async () => body,
          }),
        );
      });
    });
    r.on('error', reject);
    const body = req.getBody();
    if (typeof body === 'string') r.write(body);
    r.end();
  });
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
