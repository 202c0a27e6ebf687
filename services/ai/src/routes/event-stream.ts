import type { FastifyReply } from 'fastify';
import { openEventStream } from '@agentyard/http';
import type { EventSourceMessage } from 'eventsource-parser';
import type { CatalogEntry } from '../domain/model-catalog.ts';
import { openAiChunker } from '../domain/openai-format.ts';
import type { StreamEvent } from '../domain/providers/index.ts';

/**
 * Answers with Server-Sent Events in the OpenAI chunk format, ending with `[DONE]`; a stream the
 * provider breaks off ends with an error event instead, so clients can tell it from a clean end.
 */
export async function sendEventStream(
  reply: FastifyReply,
  model: CatalogEntry,
  events: AsyncIterable<StreamEvent>,
): Promise<void> {
  const stream = openEventStream(reply);
  const chunker = openAiChunker(model);
  stream.send(undefined, chunker.first());
  try {
    for await (const event of events) {
      if (stream.left.aborted) break;
      const chunk = chunker.of(event);
      if (chunk) stream.send(undefined, chunk);
    }
    stream.sendText(undefined, '[DONE]');
  } catch {
    stream.send(undefined, {
      error: { message: 'The AI provider stopped answering mid-stream', type: 'upstream_error' },
    });
  }
  stream.end();
}

/**
 * Passes a provider's Server-Sent Events on as it sent them (Anthropic's wire); a stream the
 * provider breaks off ends with the wire's own `error` event.
 */
export async function sendProviderEvents(
  reply: FastifyReply,
  events: AsyncGenerator<EventSourceMessage>,
): Promise<void> {
  const stream = openEventStream(reply);
  try {
    for await (const event of events) {
      if (stream.left.aborted) break;
      stream.sendText(event.event || undefined, event.data);
    }
  } catch {
    stream.send('error', {
      type: 'error',
      error: { type: 'api_error', message: 'The AI provider stopped answering mid-stream' },
    });
  }
  stream.end();
}
