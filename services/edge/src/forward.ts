import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Pool, type Dispatcher } from 'undici';
import { metrics, requestMetricsOn } from '@agentyard/observability';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus `host` (the
 * service's own) and `expect` (the edge has read the body already): never passed on in either
 * direction, nor any header a message's `Connection` names.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings', 'host', 'expect',
]);

/** The header names a message keeps to its own hop: the fixed set and those its `Connection` lists. */
export function hopHeaders(connection: unknown): ReadonlySet<string> {
  if (typeof connection !== 'string') return HOP_BY_HOP;
  const named = connection.toLowerCase().split(',').map((name) => name.trim()).filter((name) => name && name !== 'close' && !HOP_BY_HOP.has(name));
  return named.length ? new Set([...HOP_BY_HOP, ...named]) : HOP_BY_HOP;
}

/** What a client gets (502) when the service behind the edge cannot answer. */
export const BACKEND_UNAVAILABLE = { error: 'Backend unavailable' } as const;
const unavailable = Buffer.from(JSON.stringify(BACKEND_UNAVAILABLE));

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

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.#request = request;
    this.#reply = reply;
    this.#response = reply.raw;
    this.#response.once('close', () => {
      if (!this.#response.writableFinished) this.#controller?.abort(new Error('client closed the connection'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.#controller = controller;
    if (this.#response.destroyed) controller.abort(new Error('client closed the connection'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>) {
    const out = this.#reply.getHeaders() as OutgoingHttpHeaders;
    const hop = hopHeaders(headers.connection);
    for (const name in headers) if (!hop.has(name)) out[name] = headers[name];
    try {
      this.#response.writeHead(statusCode, out);
    } catch (error) { // a header value Node refuses to send
      controller.abort(error as Error);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.#response.write(chunk)) return;
    controller.pause();
    this.#response.once('drain', () => controller.resume());
  }

  onResponseEnd() {
    this.#response.end();
    // The edge's own share: its whole time on the request less the service's (dispatch to last byte).
    if (requestMetricsOn) metrics.edgeAddedDuration().observe({ surface: this.#request.server.serviceName }, Math.max(0, this.#reply.elapsedTime - (performance.now() - this.#sent)) / 1000);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    const response = this.#response;
    if (response.destroyed || response.writableEnded) return; // the client went first
    this.#request.log.warn({ err: error }, 'service failed to answer');
    if (response.headersSent) {
      response.destroy(error);
      return;
    }
    response.writeHead(502, { ...this.#reply.getHeaders() as OutgoingHttpHeaders, 'content-type': 'application/json; charset=utf-8', 'content-length': unavailable.length });
    response.end(unavailable);
  }
}

export interface Upstream {
  /** Sends the request on to the service with `headers` (hop-by-hop ones already left out) and relays its answer. */
  forward(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string | string[]>): void;
  close(): Promise<void>;
}

/** How the edge holds connections to a service: keep-alive, up to 256 at once, and how long it waits for an answer. */
export const POOL_OPTIONS = { connections: 256, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 300_000 } as const;

/** A service behind the edge, reached over a pool of keep-alive connections. */
export function upstream(origin: string): Upstream {
  const pool = new Pool(origin, POOL_OPTIONS);
  return {
    forward(request, reply, headers) {
      reply.hijack();
      // A body is one Buffer (read whole by the edge): undici sends its length as content-length.
      const body = request.body as Buffer | undefined;
      pool.dispatch({ path: request.url, method: request.method as Dispatcher.HttpMethod, headers, body }, new Relay(request, reply));
    },
    close: () => pool.close(),
  };
}
