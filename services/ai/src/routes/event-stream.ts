import type { FastifyReply } from 'fastify';
import type { CatalogEntry } from '../domain/model-catalog.ts';
import { openAiChunker } from '../domain/openai-format.ts';
import type { StreamEvent } from '../domain/providers/index.ts';

/**
 * Answers with Server-Sent Events in the OpenAI chunk format, ending with `[DONE]`; a stream the
 * provider breaks off ends with an error event instead, so clients can tell it from a clean end.
 */
export async function sendEventStream(reply: FastifyReply, model: CatalogEntry, events: AsyncIterable<StreamEvent>): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  const write = (data: unknown) => raw.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  const chunker = openAiChunker(model);
  write(chunker.first());
  try {
    for await (const event of events) {
      if (raw.destroyed) break;
      const chunk = chunker.of(event);
      if (chunk) write(chunk);
    }
    write('[DONE]');
  } catch {
    write({ error: { message: 'The AI provider stopped answering mid-stream', type: 'upstream_error' } });
  }
  raw.end();
}
