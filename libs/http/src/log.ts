import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { activeTraceId, requestLogFields, tracingOn } from '@agentyard/observability';

/**
 * Keys whose values never reach a log line, at any depth, compared without case: request and
 * response headers that carry credentials, and body fields that hold secrets.
 */
const SECRET_KEYS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-agentyard-identity',
  'password',
  'currentpassword',
  'newpassword',
  'token',
  'apikey',
  'secret',
]);
const CENSOR = '[redacted]';
/** Deeper than this, a whole object is censored: logged objects are shallow, and a cycle ends here. */
const MAX_DEPTH = 8;

const isPlain = (value: object) => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * `value` with every secret-named key censored. Plain objects and arrays are walked; one is copied
 * only when something under it is censored, so a log line without secrets costs no allocation.
 * Other objects (a request, a reply, an error) are their serializers' to shape (`err` is scrubbed
 * after its serializer below; `req` and `res` serializers keep no headers).
 */
export function withoutSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return CENSOR;
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const kept = withoutSecrets(item, depth + 1);
      if (kept !== item) (copy ??= [...value])[index] = kept;
    });
    return copy ?? value;
  }
  if (!isPlain(value)) return value;
  return scrubEntries(value as Record<string, unknown>, depth);
}

function scrubEntries(value: Record<string, unknown>, depth: number): Record<string, unknown> | string {
  if (depth >= MAX_DEPTH) return CENSOR;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = value[key];
    const kept = SECRET_KEYS.has(key.toLowerCase()) ? CENSOR : withoutSecrets(item, depth + 1);
    if (kept !== item) (copy ??= { ...value })[key] = kept;
  }
  return copy ?? value;
}

/** An error as pino's serializer shapes it (message, stack, its own fields, its causes), scrubbed. */
function serializeError(error: Error): unknown {
  const shaped: unknown = pino.stdSerializers.err(error);
  return shaped !== null && typeof shaped === 'object' ? scrubEntries(shaped as Record<string, unknown>, 0) : shaped;
}

/**
 * The pino options of every process of the platform (services and queue workers): one redaction
 * rule, applied to each line as it is written. A child logger's bindings are written as given (pino
 * formats them once, without the line formatter): they are ids, like the request id, never request
 * data. Pino's own path-based `redact` ran its paths' parser on every child logger, that is on
 * every request, and on every line.
 */
export function loggerOptions(name: string, level: string): LoggerOptions {
  return {
    name,
    level,
    // A job's lines name the request that queued it; with tracing on, each line carries its trace's id.
    mixin: tracingOn
      ? () => {
          const traceId = activeTraceId();
          return traceId ? { ...requestLogFields(), trace_id: traceId } : requestLogFields();
        }
      : requestLogFields,
    formatters: { log: (object) => withoutSecrets(object) as Record<string, unknown> },
    serializers: { err: serializeError },
  };
}

/**
 * Where log lines go: readable lines (time, level, process, request id, message) when
 * `LOG_FORMAT=pretty`, or when unset and stdout is a terminal; JSON on stdout (undefined) otherwise
 * and whenever `LOG_FORMAT=json`. `npm start` on a terminal asks its children for pretty lines.
 */
export function logDestination(env: Record<string, string | undefined> = process.env): DestinationStream | undefined {
  const format = env.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format !== 'pretty') return undefined;
  return pretty({
    sync: true,
    colorize: env.NO_COLOR === undefined && (process.stdout.isTTY || env.FORCE_COLOR !== undefined),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name,reqId',
    messageFormat: '{name}{if reqId} [{reqId}]{end} {msg}',
    singleLine: true,
  });
}

/** A logger outside any Fastify instance (a worker process; what the edge's listeners share), written where services write theirs. */
export function processLog(
  name: string,
  level: string,
  stream: { write(line: string): void } | undefined = logDestination(),
): Logger {
  return stream ? pino(loggerOptions(name, level), stream) : pino(loggerOptions(name, level));
}
