import type { FastifyReply, FastifyRequest } from 'fastify';

/** A comment line every 15 s keeps proxies and browsers from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000;

export type EventStream = ReturnType<typeof openEventStream>;

/** The event streams of one app, ended together when it closes (they would hold its close forever). */
export function eventStreams(app: { addHook(name: 'preClose', hook: () => Promise<void>): unknown }) {
  const open = new Set<EventStream>();
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });
  return (request: FastifyRequest, reply: FastifyReply): EventStream => {
    const stream = openEventStream(request, reply);
    open.add(stream);
    stream.left.addEventListener('abort', () => open.delete(stream), { once: true });
    return stream;
  };
}

/**
 * Answers with Server-Sent Events: `send` writes one event, `left` aborts when the client goes
 * (its connection closes), and `end` finishes the answer. Keep-alive comments run until then.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': request.id });
  raw.write(': connected\n\n');
  const left = new AbortController();
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  const finish = () => {
    clearInterval(keepAlive);
    left.abort();
  };
  raw.once('close', finish);
  return {
    left: left.signal,
    send(event: string, data: unknown) {
      if (!raw.destroyed) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      finish();
      if (!raw.destroyed) raw.end();
    },
  };
}
