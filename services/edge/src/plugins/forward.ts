import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Pool, type Dispatcher } from 'undici';
import { metrics, requestMetricsOn } from '@agentyard/observability';
import { EdgeErrors } from '../errors.ts';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus `host` (the
 * service's own) and `expect` (the edge has read the body already): never passed on in either
 * direction, nor any header a message's `Connection` names.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'host',
  'expect',
]);

/** The header names a message keeps to its own hop: the fixed set and those its `Connection` lists. */
export function hopHeaders(connection: unknown): ReadonlySet<string> {
  if (typeof connection !== 'string') return HOP_BY_HOP;
  const named = connection
    .toLowerCase()
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name && name !== 'close' && !HOP_BY_HOP.has(name));
  return named.length ? new Set([...HOP_BY_HOP, ...named]) : HOP_BY_HOP;
}

/**
 * Whether a request target is in origin-form (`/path?query`, RFC 9112 §3.2.1), the only form the
 * edge serves: an absolute-form target (`http://host/path`) names a host of the client's choosing.
 */
export const isOriginForm = (target: string) => target.startsWith('/');

/** The target as it goes to a service: only ever a path on the service's own origin. */
export function originForm(target: string): string {
  if (!isOriginForm(target)) throw new Error('request target not in origin-form');
  return target;
}

/** What a client gets (502) when the service behind the edge cannot answer. */
export const BACKEND_UNAVAILABLE = { error: 'Backend unavailable' } as const;
const unavailable = Buffer.from(JSON.stringify(BACKEND_UNAVAILABLE));
/** What a client gets (503) when its request waited for a connection to the service past its deadline. */
const busy = Buffer.from(JSON.stringify({ error: 'Service busy, try again' }));
const tooLarge = Buffer.from(JSON.stringify({ error: EdgeErrors.bodyTooLarge().message }));

/**
 * How long the connection of an upload answered before it was whole (refused) stays open, what
 * still arrives read and dropped: closing on unread bytes is a reset, which can take the answer
 * with it before the client has read it.
 */
const LINGER_MS = 2_000;

/**
 * Ends `response` (which says `Connection: close`) once the client has stopped sending, or after
 * LINGER_MS: the rest of its body goes nowhere meanwhile. An answer with a length is whole to the
 * client before that; a chunked one ends with it.
 */
function endAfterUpload(request: IncomingMessage, response: ServerResponse): void {
  if (request.complete || request.destroyed) {
    response.end();
    return;
  }
  const end = () => {
    clearTimeout(timer);
    response.end();
  };
  const timer = setTimeout(end, LINGER_MS).unref();
  request.once('end', end).once('close', end);
  request.unpipe(); // from the service's request, which is over (unpiping would pause it again later)
  request.resume();
}

/** A streamed body that went past its route's ceiling: the service's request is aborted with it. */
class BodyOverCeiling extends Error {
  override name = 'BodyOverCeiling';
}

/**
 * A request body on its way to the service as it arrives (a route with `streamedBody`), counted:
 * the client is read only as fast as the service takes it (pipe and undici both wait for drain),
 * and the chunk that would pass `maxBytes` is never sent: the stream fails there (undici aborts
 * the service's request) and `overCeiling` answers the client.
 */
function countedBody(source: IncomingMessage, maxBytes: number, overCeiling: () => void): Transform {
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes <= maxBytes) return callback(null, chunk);
      source.unpipe(counted);
      overCeiling();
      callback(new BodyOverCeiling(`request body over ${maxBytes} bytes`));
    },
  });
  // Not pipeline(): undici destroys its body when the service answers early, and that must not destroy the client's request.
  source.pipe(counted);
  return counted;
}

/**
 * One request's answer on its way from the service to the client, written straight into the
 * client's response: status and headers as they come (the edge's own, such as `x-request-id` and
 * the rate-limit headers, underneath), the body chunk by chunk, the service held back while the
 * client is slow to read (backpressure), and the service's request aborted when the client goes.
 * A service that cannot be reached or fails before answering is a 502 `{error}`; one that fails
 * mid-answer cuts the client's connection, so an interrupted stream never looks complete.
 */
export class Relay implements Dispatcher.DispatchHandler {
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;
  readonly #response: ServerResponse;
  #controller: Dispatcher.DispatchController | undefined;
  readonly #sent = performance.now();
  /** The request's body is relayed as it arrives (and may still be arriving when the service answers). */
  readonly #streamedBody: boolean;
  /** The client has its whole answer (the connection may still linger over the rest of an upload). */
  #answered = false;

  /** Answers 503 when the request is still waiting for a connection to the service. */
  #queueDeadline: NodeJS.Timeout | undefined;
  readonly #onStatus: ((status: number) => void) | undefined;

  constructor(
    request: FastifyRequest,
    reply: FastifyReply,
    options: { streamedBody?: boolean; queueTimeoutMs?: number; onStatus?: (status: number) => void } = {},
  ) {
    this.#request = request;
    this.#streamedBody = options.streamedBody ?? false;
    this.#onStatus = options.onStatus;
    this.#reply = reply;
    this.#response = reply.raw;
    this.#response.once('close', () => {
      clearTimeout(this.#queueDeadline);
      if (!this.#response.writableFinished) this.#controller?.abort(new Error('client closed the connection'));
    });
    if (options.queueTimeoutMs !== undefined)
      this.#queueDeadline = setTimeout(() => this.#queueTimedOut(), options.queueTimeoutMs);
  }

  /** No connection to the service came free in time: 503, and the request is dropped when its turn comes. */
  #queueTimedOut() {
    if (this.#controller || this.#answered || this.#response.destroyed) return;
    this.#request.log.warn('no connection to the service came free in time');
    this.#answerWith(503, busy);
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    clearTimeout(this.#queueDeadline);
    this.#controller = controller;
    if (this.#response.destroyed || this.#answered)
      controller.abort(new Error('client closed the connection, or was answered'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ) {
    this.#onStatus?.(statusCode);
    const out = this.#reply.getHeaders() as OutgoingHttpHeaders;
    const hop = hopHeaders(headers.connection);
    for (const name in headers) if (!hop.has(name)) out[name] = headers[name];
    if (this.#uploading()) out.connection = 'close';
    try {
      this.#response.writeHead(statusCode, out);
    } catch (error) {
      // a header value Node refuses to send
      controller.abort(error as Error);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.#response.write(chunk)) return;
    controller.pause();
    this.#response.once('drain', () => controller.resume());
  }

  onResponseEnd() {
    this.#end();
    // The edge's own share: its whole time on the request less the service's (dispatch to last byte).
    if (requestMetricsOn)
      metrics
        .edgeAddedDuration()
        .observe(
          { surface: this.#request.server.serviceName },
          Math.max(0, this.#reply.elapsedTime - (performance.now() - this.#sent)) / 1000,
        );
  }

  /**
   * The client's streamed body passed its route's ceiling: 413 `{error}` and nothing more
   * forwarded; cut instead where the service has begun answering.
   */
  refuseBody() {
    if (!this.#answered && !this.#response.destroyed) {
      if (this.#response.headersSent) this.#response.destroy();
      else this.#answerWith(413, tooLarge);
    }
    this.#answered = true;
    this.#controller?.abort(new BodyOverCeiling('request body over its ceiling'));
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    const response = this.#response;
    if (this.#answered || response.destroyed || response.writableEnded) return; // answered, or the client went first
    this.#request.log.warn({ err: error }, 'service failed to answer');
    if (response.headersSent) {
      response.destroy(error);
      return;
    }
    this.#answerWith(502, unavailable);
  }

  /** A streamed body still arriving while the client is answered (refused, early): the connection closes after the answer. */
  #uploading(): boolean {
    return this.#streamedBody && !this.#request.raw.complete;
  }

  /** An answer of the edge's own, `{error}` JSON, with the edge's headers (request id, rate limits). */
  #answerWith(status: number, body: Buffer) {
    const connection = this.#uploading() ? { connection: 'close' } : {};
    this.#response.writeHead(status, {
      ...(this.#reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
      ...connection,
    });
    this.#response.write(body);
    this.#end();
  }

  #end() {
    this.#answered = true;
    if (this.#uploading()) endAfterUpload(this.#request.raw, this.#response);
    else this.#response.end();
  }
}

/** How one request is forwarded: its body streamed up to `maxBytes`, its answer long-lived, its answer's status wanted. */
export interface ForwardOptions {
  streamedBody?: { maxBytes: number };
  longLived?: boolean;
  onStatus?: (status: number) => void;
}

export interface Upstream {
  /**
   * Sends the request on to the service with `headers` (hop-by-hop ones already left out) and relays
   * its answer; with `streamedBody`, the body is the client's request stream, cut at `maxBytes`.
   */
  forward(
    request: FastifyRequest,
    reply: FastifyReply,
    headers: Record<string, string | string[]>,
    options?: ForwardOptions,
  ): void;
  close(): Promise<void>;
}

/** How the edge holds connections to a service: keep-alive, and how long it waits for an answer. */
export const POOL_OPTIONS = {
  pipelining: 1,
  keepAliveTimeout: 60_000,
  headersTimeout: 120_000,
  bodyTimeout: 300_000,
} as const;

/** How many connections the edge keeps to a service: for short requests, and apart for long-lived answers (at most as many as it holds open). */
export interface UpstreamLimits {
  connections: number;
  streamConnections: number;
  /** How long a request may wait for a free connection (503 after). */
  queueTimeoutMs: number;
}

/**
 * A service behind the edge, reached over two pools of keep-alive connections: one for short
 * requests and one for long-lived answers (event streams, streamed chat), so answers that stay
 * open never take the connections short requests wait for.
 */
export function upstream(origin: string, limits: UpstreamLimits): Upstream {
  const short = new Pool(origin, { ...POOL_OPTIONS, connections: limits.connections });
  const long = new Pool(origin, { ...POOL_OPTIONS, connections: limits.streamConnections });
  return {
    forward(request, reply, headers, { streamedBody, longLived, onStatus } = {}) {
      reply.hijack();
      const relay = new Relay(request, reply, {
        streamedBody: streamedBody !== undefined,
        queueTimeoutMs: limits.queueTimeoutMs,
        onStatus,
      });
      if (streamedBody && Number(request.headers['content-length'] ?? 0) > streamedBody.maxBytes) {
        relay.refuseBody();
        return;
      }
      // A body is one Buffer (read whole by the edge; undici sends its length as content-length),
      // or on a streamed route the client's stream, sent chunked as it arrives.
      const body =
        streamedBody && request.body !== undefined
          ? countedBody(request.raw, streamedBody.maxBytes, () => relay.refuseBody())
          : (request.body as Buffer | undefined);
      (longLived ? long : short).dispatch(
        { path: originForm(request.url), method: request.method as Dispatcher.HttpMethod, headers, body },
        relay,
      );
    },
    close: async () => {
      await Promise.all([short.close(), long.close()]);
    },
  };
}
