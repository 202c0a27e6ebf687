import type { CatalogEntry } from './model-catalog.ts';
import type { Completion, StreamEvent, TokenUsage, ToolCall, ToolCallDelta } from './providers/index.ts';

export const usageBody = (usage: TokenUsage | null) => ({
  prompt_tokens: usage?.input ?? 0,
  completion_tokens: usage?.output ?? 0,
  total_tokens: (usage?.input ?? 0) + (usage?.output ?? 0),
});

// Gemini's thought signature travels where Google's own OpenAI-compatible endpoint puts it.
const signatureOf = (signature: string | undefined) =>
  signature ? { extra_content: { google: { thought_signature: signature } } } : {};

const openAiToolCall = (call: ToolCall) => ({
  id: call.id,
  type: 'function',
  function: { name: call.name, arguments: call.arguments },
  ...signatureOf(call.signature),
});

const openAiToolCallDelta = (call: ToolCallDelta) => ({
  index: call.index,
  ...(call.id !== undefined ? { id: call.id, type: 'function' } : {}),
  function: { ...(call.name !== undefined ? { name: call.name } : {}), arguments: call.arguments },
  ...signatureOf(call.signature),
});

/** A completion in the OpenAI chat-completion format, naming our model id. */
export function openAiCompletion(model: CatalogEntry, completion: Completion): Record<string, unknown> {
  if (completion.openAiBody) return { ...completion.openAiBody, model: model.id };
  const toolCalls = completion.toolCalls.length ? { tool_calls: completion.toolCalls.map(openAiToolCall) } : {};
  return {
    id: completion.id || `chatcmpl-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model.id,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: completion.content || (completion.toolCalls.length ? null : ''),
          ...toolCalls,
        },
        finish_reason: completion.finishReason,
      },
    ],
    usage: usageBody(completion.usage),
  };
}

/** Turns stream events into OpenAI `chat.completion.chunk` objects. */
export function openAiChunker(model: CatalogEntry) {
  const id = `chatcmpl-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: model.id,
    choices,
    ...extra,
  });
  return {
    first: () => chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    of(event: StreamEvent): Record<string, unknown> | null {
      if (event.type === 'delta') {
        if (event.openAiChunk) return { ...event.openAiChunk, model: model.id };
        const delta = {
          ...(event.text ? { content: event.text } : {}),
          ...(event.toolCalls?.length ? { tool_calls: event.toolCalls.map(openAiToolCallDelta) } : {}),
        };
        return Object.keys(delta).length ? chunk([{ index: 0, delta, finish_reason: null }]) : null;
      }
      if (event.type === 'finish') return chunk([{ index: 0, delta: {}, finish_reason: event.reason }]);
      return chunk([], { usage: usageBody(event.usage) });
    },
  };
}
