import type { CatalogEntry } from './model-catalog.ts';
import type { Completion, StreamEvent, TokenUsage } from './providers/index.ts';

export const usageBody = (usage: TokenUsage | null) => ({
  prompt_tokens: usage?.input ?? 0, completion_tokens: usage?.output ?? 0, total_tokens: (usage?.input ?? 0) + (usage?.output ?? 0),
});

/** A completion in the OpenAI chat-completion format, naming our model id. */
export function openAiCompletion(model: CatalogEntry, completion: Completion): Record<string, unknown> {
  if (completion.openAiBody) return { ...completion.openAiBody, model: model.id };
  return {
    id: completion.id || `chatcmpl-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model.id,
    choices: [{ index: 0, message: { role: 'assistant', content: completion.content }, finish_reason: completion.finishReason }],
    usage: usageBody(completion.usage),
  };
}

/** Turns stream events into OpenAI `chat.completion.chunk` objects. */
export function openAiChunker(model: CatalogEntry) {
  const id = `chatcmpl-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: 'chat.completion.chunk', created, model: model.id, choices, ...extra });
  return {
    first: () => chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    of(event: StreamEvent): Record<string, unknown> | null {
      if (event.type === 'delta') {
        if (event.openAiChunk) return { ...event.openAiChunk, model: model.id };
        return event.text ? chunk([{ index: 0, delta: { content: event.text }, finish_reason: null }]) : null;
      }
      if (event.type === 'finish') return chunk([{ index: 0, delta: {}, finish_reason: event.reason }]);
      return chunk([], { usage: usageBody(event.usage) });
    },
  };
}
