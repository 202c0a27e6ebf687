import { randomUUID } from 'node:crypto';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { compileValidator } from './ajv.ts';
import { HttpError, errorBody } from './errors.ts';
import { metrics, requestMetricsOn, runForRequest } from '@agentyard/observability';
import { parseJsonText } from './json-body.ts';
import { logDestination, loggerOptions } from './log.ts';
import { badRequestMessage } from './violations.ts';

declare module 'fastify' {
  interface FastifyInstance {
    serviceName: string;
  }
}

export type ServiceApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface ServerOptions {
  name: string;
  logLevel?: string;
  bodyLimit?: number;
  /** Addresses whose X-Forwarded-For is believed (the edge, on loopback, for services). */
  trustProxy?: boolean | string;
  /** Off for the edge, which passes bodies through to services unparsed. */
  parseJson?: boolean;
  /** Where log lines go (default stdout); tests read them. */
  logStream?: { write(line: string): void };
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** Logs a request by method and path; query values are left out because some carry codes and tokens. */
function serializeRequest(request: FastifyRequest) {
  const [path, query] = request.url.split('?', 2);
  return {
    method: request.method,
    url: query ? `${path}?${[...new URLSearchParams(query).keys()].map((k) => `${k}=…`).join('&')}` : path,
    remoteAddress: request.ip,
  };
}

function renderError(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const badRequest = badRequestMessage(error, request);
  if (badRequest !== undefined) return reply.code(400).send({ error: badRequest });
  if (error instanceof HttpError) {
    if (error.statusCode >= 500)
      request.log.error({ err: { message: error.message, code: error.code } }, 'request failed');
    return reply.code(error.statusCode).send(errorBody(error));
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message || 'Bad request' });
  if (status >= 500 && status < 600 && (error as { expose?: unknown }).expose === true) {
    request.log.error({ err: { message: error.message, name: error.name } }, 'request failed');
    return reply.code(status).send({ error: error.message });
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.code(status >= 500 && status < 600 ? status : 500).send({ error: 'Internal server error' });
}

/** JSON bodies as parseJsonText reads them; an empty body is no body. */
function parseJsonBody(_request: FastifyRequest, body: string, done: (err: Error | null, value?: unknown) => void) {
  if (body.length === 0) return done(null, undefined);
  try {
    done(null, parseJsonText(body));
  } catch (error) {
    done(error as Error);
  }
}

/** A Fastify instance with the platform's conventions: TypeBox, strict bodies, `{error}` bodies, request ids, redacted logs. */
export function createServer(options: ServerOptions): ServiceApp {
  const base = loggerOptions(options.name, options.logLevel ?? 'info');
  const stream = options.logStream ?? logDestination();
  const app = Fastify({
    logger:
      options.logLevel === 'silent'
        ? false
        : {
            ...base,
            serializers: { ...base.serializers, req: serializeRequest },
            ...(stream ? { stream } : {}),
          },
    bodyLimit: options.bodyLimit ?? 1048576,
    trustProxy: options.trustProxy ?? false,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    keepAliveTimeout: 72_000,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('serviceName', options.name);
  // Everything a request starts knows its id: a job it queues carries it (libs/queue).
  app.addHook('onRequest', (request, _reply, done) => runForRequest(request.id, done));
  app.setValidatorCompiler(compileValidator);
  app.setErrorHandler(renderError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'Not found' }));
  if (requestMetricsOn) observeRequestDurations(app, options.name);
  if (options.parseJson !== false) {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  }
  return app;
}

/**
 * `http_request_duration_seconds` for every answer, hijacked ones (the edge's relays) included:
 * labelled by the route pattern, so `/api/agents/:id` is one series whatever the id.
 */
function observeRequestDurations(app: ServiceApp, service: string): void {
  const histogram = metrics.httpRequestDuration();
  app.addHook('onResponse', (request, reply, done) => {
    histogram.observe(
      {
        service,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
