import type { FastifyReply } from 'fastify';

/** A comment line this often keeps proxies and browsers from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000;

export interface EventStreamOptions {
  /** Send `: keep-alive` comments this often (streams that may stay quiet); none by default. */
  keepAliveMs?: number;
  /** Extra response headers (a request id). */
  headers?: Record<string, string>;
}

export interface EventStream {
  /** Aborts when the client goes (its connection closes) or the stream ends. */
  left: AbortSignal;
  /** One event whose data is `data` as JSON; `event` names it (none: the default `message`). */
  send(event: string | undefined, data: unknown): void;
  /** One event whose data is already encoded (a provider's own payload, OpenAI's `[DONE]`). */
  sendText(event: string | undefined, text: string): void;
  end(): void;
}

/** One field per line: a payload's own line breaks would otherwise end the event early. */
const frame = (event: string | undefined, data: string) =>
  `${event ? `event: ${event}\n` : ''}${data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('')}\n`;

/** Answers with Server-Sent Events: the mesh's one writer of them (chat, AI wires, status and log streams). */
export function openEventStream(reply: FastifyReply, options: EventStreamOptions = {}): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...options.headers,
  });
  const left = new AbortController();
  let keepAlive: NodeJS.Timeout | undefined;
  if (options.keepAliveMs) {
    raw.write(': connected\n\n');
    keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), options.keepAliveMs);
  }
  const finish = () => {
    clearInterval(keepAlive);
    left.abort();
  };
  raw.once('close', finish);
  return {
    left: left.signal,
    send(event, data) {
      if (!raw.destroyed) raw.write(frame(event, JSON.stringify(data)));
    },
    sendText(event, text) {
      if (!raw.destroyed) raw.write(frame(event, text));
    },
    end() {
      finish();
      if (!raw.destroyed) raw.end();
    },
  };
}

/** The event streams of one app, ended together when it closes (they would hold its close forever). */
export function eventStreams(app: { addHook(name: 'preClose', hook: () => Promise<void>): unknown }) {
  const open = new Set<EventStream>();
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });
  return (reply: FastifyReply, options?: EventStreamOptions): EventStream => {
    const stream = openEventStream(reply, options);
    open.add(stream);
    stream.left.addEventListener('abort', () => open.delete(stream), { once: true });
    return stream;
  };
}
