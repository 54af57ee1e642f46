// The HTTPS side: POST /mutate and /validate, AdmissionReview in and out. HTTP concerns only
// (content type, size, JSON, status codes); the review itself is the pipeline's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import querystring from 'node:querystring';
import type { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { fastify, LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import type { Endpoint } from '../admission/index.js';
import { handleReview, type PipelineDeps, type PipelineResult } from './pipeline.js';
import { lookupBudgetMs } from './deadline.js';
import { secureContextOptions, type TlsMaterial } from './tls.js';
import type { ConnectionLimits } from './types.js';
import {
  containersFor,
  DEFAULT_ANSWER_DRAIN_MS,
  DEFAULT_INFLIGHT_BYTES,
  type Held,
  InflightBytes,
  jsonShapeProblem,
  MAX_BODY_DEPTH,
} from './body.js';
// Built-ins from process.getBuiltinModule, not `import x from 'node:x'`: an ES import of a built-in
// reads every export once, and node:http's lazy WebSocket, CloseEvent and MessageEvent then load
// undici (~1.3 MB of heap, held for good; issue 39); node:tls's rootCertificates parses the CA list.
const https = process.getBuiltinModule('node:https');

const FIRST_REQUEST = Symbol('netattach.firstRequest');
/** An answer held until its client reads it (HeldAnswer), on its response. */
const HELD_ANSWER = Symbol('netattach.heldAnswer');
/** The body being read from a request stream (admission-app's BodyRead), while it is read. */
const BODY_READ = Symbol('netattach.bodyRead');

export const CONNECTION_LIMITS: ConnectionLimits = {
  keepAliveTimeoutMs: 120_000,
  firstRequestMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 2_000,
  maxConnections: 1024,
  inflightBytes: DEFAULT_INFLIGHT_BYTES,
  answerDrainMs: DEFAULT_ANSWER_DRAIN_MS,
};

export interface AdmissionAppOptions {
  tls: TlsMaterial;
  requireClientCert: boolean;
  bodyLimit: number;
  limits?: Partial<ConnectionLimits>;
  /** A failed TLS handshake (bad client certificate, no shared cipher, timeout). */
  onTlsError?: (err: Error & { code?: string }, socket: TLSSocket) => void;
  logger: Logger;
  pipeline: PipelineDeps;
  /** Kept with the server's close(): when requests last came, and whether answers end their connection. */
  drain?: Drain;
}

/**
 * A drain in progress: every answer asks the client to close its connection (`Connection: close`),
 * so that the API server closes the kept-alive connections it uses instead of the server closing
 * one under a request it is sending (server.ts, close()).
 */
export interface Drain {
  draining: boolean;
  lastRequestAt: number;
}

export type AdmissionApp = FastifyInstance<HttpsServer>;

/**
 * A JSON key `word` followed by its colon, each character written as itself or as a `\\u` escape
 * (hex digits in either case): the forms JSON.parse turns into that key.
 */
const keyPattern = (word: string): RegExp =>
  new RegExp(
    `"${[...word]
      .map(
        (ch) =>
          `(?:${ch}|\\\\u${ch
            .charCodeAt(0)
            .toString(16)
            .padStart(4, '0')
            .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`)})`,
      )
      .join('')}"\\s*:`,
  );
const PROTO_KEY = keyPattern('__proto__');
const CONSTRUCTOR_KEY = keyPattern('constructor');

/**
 * Whether JSON text could hold a `__proto__` or `constructor` key, escaped or not: the test
 * secure-json-parse (fastify's parser) makes before it walks the parsed object. Two regular
 * expressions cost a third of three `includes` over a 4 KiB pod (bench/profile.ts).
 */
export const mayBePoisoned = (text: string): boolean => PROTO_KEY.test(text) || CONSTRUCTOR_KEY.test(text);

/** The `endpoint` label of a refused request: its route, or `other` (no route matched). */
export const routeLabel = (route: string | undefined): string => (route === '/mutate' || route === '/validate' ? route : 'other');

/** A request path for a log line or an error: without the query, at most 200 characters. */
export const shortUrl = (url: string): string => {
  const path = url.split('?')[0] ?? '';
  return path.length > 200 ? `${path.slice(0, 200)}... (${path.length} characters)` : path;
};

export function createAdmissionApp(options: AdmissionAppOptions): AdmissionApp {
  const { pipeline, logger } = options;
  const limits: ConnectionLimits = { ...CONNECTION_LIMITS, ...options.limits };
  const inflight = new InflightBytes(limits.inflightBytes);
  // An answer the socket could not take at once is held in memory until the client reads it:
  // counted in the budget with the bodies, and dropped with its connection when the budget needs
  // room for newer ones or when it has waited answerDrainMs. A TLS socket reports its write done
  // a moment later, so nearly every answer is held for that moment: one small object each, found
  // by shared handlers (no closure, no timer per answer), and one sweep timer for all of them.
  class HeldAnswer implements Held {
    bytes = 0;
    readonly since = performance.now();
    constructor(readonly socket: Socket) {}
    cut(): void {
      this.socket.destroy();
    }
  }
  /** Held answers, oldest first (a Set keeps insertion order). */
  const heldAnswers = new Set<HeldAnswer>();
  let sweepTimer: NodeJS.Timeout | undefined;
  const sweep = (): void => {
    const oldest = performance.now() - limits.answerDrainMs;
    for (const held of heldAnswers) {
      if (held.since > oldest) break;
      heldAnswers.delete(held);
      inflight.end(held);
      held.socket.destroy();
    }
    if (heldAnswers.size === 0 && sweepTimer !== undefined) {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
    }
  };
  function holdUntilRead(this: ServerResponse & { [HELD_ANSWER]?: HeldAnswer | undefined }): void {
    const socket = this.socket;
    if (this.writableFinished || !socket || socket.writableLength === 0) return;
    const held = new HeldAnswer(socket);
    inflight.hold(held);
    heldAnswers.add(held);
    this[HELD_ANSWER] = held;
    this.on('finish', answerTaken);
    this.on('close', answerTaken);
    if (sweepTimer === undefined) {
      sweepTimer = setInterval(sweep, Math.max(10, limits.answerDrainMs / 4));
      sweepTimer.unref();
    }
    if (!inflight.add(held, socket.writableLength)) {
      answerTaken.call(this);
      socket.destroy();
    }
  }
  function answerTaken(this: ServerResponse & { [HELD_ANSWER]?: HeldAnswer | undefined }): void {
    const held = this[HELD_ANSWER];
    if (held === undefined) return;
    this[HELD_ANSWER] = undefined;
    heldAnswers.delete(held);
    inflight.end(held);
  }
  const app = fastify<HttpsServer>({
    serverFactory: (handler) => {
      const server: HttpsServer = https.createServer(
        {
          ...secureContextOptions(options.tls),
          requestCert: options.requireClientCert,
          rejectUnauthorized: options.requireClientCert,
          handshakeTimeout: limits.firstRequestMs,
          connectionsCheckingInterval: limits.checkIntervalMs,
        },
        (req, res) => {
          const socket = req.socket as TLSSocket & { [FIRST_REQUEST]?: NodeJS.Timeout };
          if (socket[FIRST_REQUEST] !== undefined) {
            clearTimeout(socket[FIRST_REQUEST]);
            socket[FIRST_REQUEST] = undefined;
          }
          const drain = options.drain;
          if (drain) {
            drain.lastRequestAt = Date.now();
            if (drain.draining) res.setHeader('connection', 'close');
          }
          res.on('prefinish', holdUntilRead);
          if (!fastPath(req, res)) handler(req, res);
        },
      );
      server.keepAliveTimeout = limits.keepAliveTimeoutMs;
      server.headersTimeout = limits.headersTimeoutMs;
      server.requestTimeout = limits.requestTimeoutMs;
      server.maxConnections = limits.maxConnections;
      // Node does not time out a connection that never sends a request; the apiserver sends its
      // request right after the handshake. (Not a 'data' listener: that would take the socket off
      // Node's fast native read path.)
      server.on('secureConnection', (socket: TLSSocket) => {
        const timer = setTimeout(() => socket.destroy(), limits.firstRequestMs);
        timer.unref();
        (socket as TLSSocket & { [FIRST_REQUEST]?: NodeJS.Timeout })[FIRST_REQUEST] = timer;
        socket.once('close', () => clearTimeout(timer));
      });
      server.on('tlsClientError', (err: Error & { code?: string }, socket: TLSSocket) => options.onTlsError?.(err, socket));
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
  // The body is read here, not by fastify, to count it against the in-flight budget (body.ts).
  const fastifyJson = app.getDefaultJsonParser('error', 'error');
  const shapeLimits = { maxDepth: MAX_BODY_DEPTH, maxContainers: containersFor(options.bodyLimit) };
  const refuse = (status: number, code: string, message: string): FastifyError => {
    const err = new Error(message) as FastifyError;
    err.statusCode = status;
    err.code = code;
    return err;
  };
  const parse = (request: Parameters<typeof fastifyJson>[0], text: string, done: NonNullable<Parameters<typeof fastifyJson>[2]>) => {
    const shape = jsonShapeProblem(text, shapeLimits);
    if (shape) return done(refuse(400, 'NETATTACH_BODY_SHAPE', `${shape}: refused (no AdmissionReview is shaped like this)`));
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
        return done(
          refuse(
            400,
            'NETATTACH_PROTOTYPE_POISONING',
            'the body holds a "__proto__" key or a "constructor" with a "prototype" (prototype poisoning): refused',
          ),
        );
      }
    }
    return done(null, parsed);
  };
  const tooLarge = () => refuse(413, 'FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large');
  app.removeContentTypeParser('application/json');
  type Done = (err: FastifyError | null, body?: unknown) => void;
  // Reads and parses a JSON body (fastify's content-type parser, and the fast path below). One
  // object per body holds its state and is its place in the in-flight budget; the stream's
  // listeners are shared functions that find it on the stream: a kept-alive connection keeps its
  // last request, and with it whatever that request's listeners close over.
  class BodyRead implements Held {
    bytes = 0;
    chunks: Buffer[] = [];
    settled = false;
    constructor(
      readonly raw: IncomingMessage,
      readonly payload: Readable & { [BODY_READ]?: BodyRead | undefined },
      readonly declared: number,
      readonly done: Done,
    ) {}
    /** Cut to make room for newer bodies: answered (if the socket still can be) and closed. */
    cut(): void {
      this.finish(refuse(503, 'NETATTACH_BODY_EVICTED', 'the request body arrived too slowly while others waited: closed'));
      this.raw.socket?.destroy();
    }
    data(chunk: Buffer): void {
      if (this.settled) return;
      if (this.bytes + chunk.length > options.bodyLimit) return this.finish(tooLarge());
      this.chunks.push(chunk);
      // Room is made by cutting older unfinished bodies; a body that still does not fit is refused.
      if (!inflight.add(this, chunk.length)) this.finish(refuse(503, 'NETATTACH_BUSY', 'too many request bodies arriving at once: retry'));
    }
    end(): void {
      if (!Number.isNaN(this.declared) && this.bytes !== this.declared) {
        return this.finish(refuse(400, 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', 'Request body size did not match Content-Length'));
      }
      const text = Buffer.concat(this.chunks).toString('utf8');
      this.chunks.length = 0;
      this.finish(null, text);
    }
    finish(err: FastifyError | null, text?: string): void {
      if (this.settled) return;
      this.settled = true;
      inflight.end(this);
      this.payload.removeListener('data', onBodyData);
      // The 'error' and 'close' listeners stay (a stream that errs later must have one); they find nothing to do.
      this.payload[BODY_READ] = undefined;
      if (err) {
        this.chunks.length = 0; // what arrived is dropped now, not when the request object goes
        this.payload.resume();
        return this.done(err, undefined);
      }
      parse(
        this.raw as unknown as Parameters<typeof fastifyJson>[0],
        text ?? '',
        this.done as NonNullable<Parameters<typeof fastifyJson>[2]>,
      );
    }
  }
  const readJson = (raw: IncomingMessage, payload: Readable & { [BODY_READ]?: BodyRead | undefined }, done: Done): void => {
    const declared = Number(raw.headers['content-length']);
    if (declared > options.bodyLimit) return done(tooLarge(), undefined);
    const read = new BodyRead(raw, payload, declared, done);
    inflight.hold(read);
    payload[BODY_READ] = read;
    payload.on('data', onBodyData);
    payload.on('error', onBodyError);
    payload.on('close', onBodyClose);
    payload.on('end', onBodyEnd);
  };
  function onBodyData(this: { [BODY_READ]?: BodyRead | undefined }, chunk: Buffer): void {
    this[BODY_READ]?.data(chunk);
  }
  function onBodyError(this: { [BODY_READ]?: BodyRead | undefined }, err: Error): void {
    this[BODY_READ]?.finish(refuse(400, 'NETATTACH_BODY_ABORTED', `the request body could not be read: ${err.message}`));
  }
  // 'close' follows 'end' on every request: the error (and its stack trace, 28 µs of a cold call)
  // is made only when the body really was cut short.
  function onBodyClose(this: { [BODY_READ]?: BodyRead | undefined }): void {
    this[BODY_READ]?.finish(refuse(400, 'NETATTACH_BODY_ABORTED', 'the request body was not completed'));
  }
  function onBodyEnd(this: { [BODY_READ]?: BodyRead | undefined }): void {
    this[BODY_READ]?.end();
  }
  app.addContentTypeParser('application/json', (request, payload, done) => readJson(request.raw, payload, done));

  /** The answer to a failed request: counted, logged, and the body sent (by fastify or the fast path). */
  const failure = (err: FastifyError, route: string | undefined, url: string): { status: number; body: Record<string, unknown> } => {
    // 4xx, and the 503 of a body cut or refused for room (body.ts), are the client's; anything else is ours.
    const status =
      err.statusCode !== undefined && ((err.statusCode >= 400 && err.statusCode < 500) || err.statusCode === 503) ? err.statusCode : 500;
    // A label value from a fixed set: the raw path is the client's, and one series per unique
    // path grew the registry without bound (finding 1 of issue 15).
    const endpoint = routeLabel(route);
    pipeline.metrics.badRequests.inc({ endpoint, status: String(status) });
    if (status === 500) {
      logger.error({ url: shortUrl(url), err: err.message }, 'request failed');
      return { status: 500, body: { error: 'internal error', statusCode: 500 } };
    }
    logger.info({ url: shortUrl(url), status, code: err.code, err: err.message }, 'bad request');
    return { status, body: { error: err.message, code: err.code, statusCode: status } };
  };
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const { status, body } = failure(err, request.routeOptions.url, request.url);
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: `no route ${request.method} ${shortUrl(request.url)}: use POST /mutate or POST /validate`, statusCode: 404 }),
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
  // Not async: a review answered from the NAD cache is sent in the same tick. `timeout` is read
  // only when a NAD lookup needs its budget (never on the hot path).
  const route = (endpoint: Endpoint) => (request: { body: unknown; timeout: () => unknown }, reply: Reply) => {
    const result = handleReview(request.body, endpoint, () => lookupBudgetMs(request.timeout()), pipeline);
    return result instanceof Promise ? result.then((r) => answer(endpoint, r, reply)) : answer(endpoint, result, reply);
  };
  const routes = { mutate: route('mutate'), validate: route('validate') };
  const viaFastify =
    (endpoint: Endpoint) =>
    (request: { body: unknown; query: unknown }, reply: Reply): unknown =>
      routes[endpoint]({ body: request.body, timeout: () => (request.query as Record<string, unknown> | undefined)?.timeout }, reply);
  app.post('/mutate', viaFastify('mutate'));
  app.post('/validate', viaFastify('validate'));

  // The hot path without fastify: a POST of JSON to /mutate or /validate with a Content-Length,
  // which is every call the kube-apiserver makes. Routing, hooks and the reply machinery cost
  // 100-170 µs of CPU per call when calls come a few times a second (docs/performance.md); the body goes through the same reader and parser (limits, in-flight
  // budget, shape, prototype poisoning), and errors get the same status, body, metric and log
  // line as through fastify. Anything else (other paths or methods, other content types, chunked
  // bodies, 100-continue) goes to fastify.
  const send = (res: ServerResponse, status: number, payload: unknown, close = false): void => {
    const text = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) };
    res.writeHead(status, close ? { ...headers, connection: 'close' } : headers);
    res.end(text);
  };
  function fastPath(req: IncomingMessage, res: ServerResponse): boolean {
    const length = req.headers['content-length'];
    if (req.method !== 'POST' || req.headers['content-type'] !== 'application/json' || length === undefined || !/^[1-9]\d*$/.test(length))
      return false;
    if (req.headers['transfer-encoding'] !== undefined || req.headers.expect !== undefined) return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const endpoint: Endpoint | undefined = path === '/mutate' ? 'mutate' : path === '/validate' ? 'validate' : undefined;
    if (endpoint === undefined) return false;
    const fail = (err: unknown, close = false): void => {
      const { status, body } = failure(err as FastifyError, path, url);
      if (!res.headersSent && !res.destroyed) send(res, status, body, close);
    };
    readJson(req, req, (err, body) => {
      // A body refused (too large, cut, malformed) may not have been read to its end: the
      // connection is closed after the answer, as fastify's parser does, instead of reading the
      // rest at the client's pace (a 413 used to keep the connection until the request timeout).
      if (err) return fail(err, true);
      try {
        // The same route handler as through fastify, with the query parsed here if it is needed.
        const timeout = () => (q === -1 ? undefined : querystring.parse(url.slice(q + 1)).timeout);
        const reply = { code: (n: number) => ({ send: (b: unknown) => send(res, n, b) }) };
        const sent = routes[endpoint]({ body, timeout }, reply);
        if (sent instanceof Promise) sent.catch(fail);
      } catch (e) {
        fail(e);
      }
    });
    return true;
  }
  app.addHook('onClose', async () => {
    if (sweepTimer !== undefined) clearInterval(sweepTimer);
    sweepTimer = undefined;
  });
  return app;
}
