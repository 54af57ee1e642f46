// The HTTPS side: POST /mutate and /validate, AdmissionReview in and out. HTTP concerns only
// (content type, size, JSON, status codes); the review itself is the pipeline's.
import https from 'node:https';
import { fastify, LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import type { Endpoint } from '../admission/types.js';
import { handleReview, type PipelineDeps, type PipelineResult } from './pipeline.js';
import { lookupBudgetMs } from './deadline.js';
import { secureContextOptions, type TlsMaterial } from './tls.js';

/** Idle connections from the apiserver live up to 90 s: close ours later than that. */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
export const HEADERS_TIMEOUT_MS = 121_000;
/** A whole request (headers and body) must arrive within this. */
export const REQUEST_TIMEOUT_MS = 125_000;

export interface AdmissionAppOptions {
  tls: TlsMaterial;
  requireClientCert: boolean;
  bodyLimit: number;
  logger: Logger;
  pipeline: PipelineDeps;
}

export type AdmissionApp = FastifyInstance<https.Server>;

/** Whether JSON text could hold a `__proto__` or `constructor` key, escaped or not. */
export const mayBePoisoned = (text: string): boolean =>
  text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');

export function createAdmissionApp(options: AdmissionAppOptions): AdmissionApp {
  const { pipeline, logger } = options;
  const app = fastify<https.Server>({
    serverFactory: (handler) => {
      const server = https.createServer(
        {
          ...secureContextOptions(options.tls),
          requestCert: options.requireClientCert,
          rejectUnauthorized: options.requireClientCert,
        },
        handler,
      );
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.headersTimeout = HEADERS_TIMEOUT_MS;
      server.requestTimeout = REQUEST_TIMEOUT_MS;
      return server;
    },
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger: nothing logs through request.log, and the pipeline names the review.
    childLoggerFactory: (parent) => parent,
    bodyLimit: options.bodyLimit,
    // Requests that arrive on open connections while draining are still answered.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    exposeHeadRoutes: false,
  });
  // Only JSON is an AdmissionReview: anything else is 415 (fastify also parses text/plain by default).
  app.removeContentTypeParser('text/plain');
  // fastify's JSON parser scans every body with two regular expressions for `__proto__` and
  // `constructor` keys (prototype poisoning), a fifth of the parse time of a pod. A body holding
  // neither word nor any \u escape cannot hold such a key, so only other bodies are scanned (by
  // secure-json-parse, as fastify does). Empty and malformed bodies get fastify's own errors.
  const fastifyJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return fastifyJson(request, text, done);
    }
    if (typeof parsed === 'object' && parsed !== null && mayBePoisoned(text)) {
      try {
        secureJson.scan(parsed as Record<string, unknown>, { protoAction: 'error', constructorAction: 'error' });
      } catch {
        const err = new Error('the body holds a "__proto__" key or a "constructor" with a "prototype" (prototype poisoning): refused') as FastifyError;
        err.statusCode = 400;
        err.code = 'NETATTACH_PROTOTYPE_POISONING';
        return done(err, undefined);
      }
    }
    return done(null, parsed);
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    const endpoint = request.url.split('?')[0] ?? '';
    pipeline.metrics.badRequests.inc({ endpoint, status: String(status) });
    if (status === 500) {
      logger.error({ url: endpoint, err: err.message }, 'request failed');
      return reply.code(500).send({ error: 'internal error', statusCode: 500 });
    }
    logger.info({ url: endpoint, status, code: err.code, err: err.message }, 'bad request');
    return reply.code(status).send({ error: err.message, code: err.code, statusCode: status });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}: use POST /mutate or POST /validate`, statusCode: 404 }),
  );

  type Reply = { code: (n: number) => { send: (b: unknown) => unknown } };
  const answer = (endpoint: Endpoint, result: PipelineResult, reply: Reply) => {
    if (result.status === 400) {
      pipeline.metrics.badRequests.inc({ endpoint: `/${endpoint}`, status: '400' });
      logger.info({ url: `/${endpoint}`, status: 400, err: result.error }, 'bad request');
      return reply.code(400).send({ error: result.error, statusCode: 400 });
    }
    return reply.code(200).send(result.review);
  };
  // Not async: a review answered from the NAD cache is sent in the same tick.
  const route = (endpoint: Endpoint) => (request: { body: unknown; query: unknown }, reply: Reply) => {
    const timeout = (request.query as Record<string, unknown> | undefined)?.timeout;
    const result = handleReview(request.body, endpoint, () => lookupBudgetMs(timeout), pipeline);
    return result instanceof Promise ? result.then((r) => answer(endpoint, r, reply)) : answer(endpoint, result, reply);
  };
  app.post('/mutate', route('mutate'));
  app.post('/validate', route('validate'));
  return app;
}
