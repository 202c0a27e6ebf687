import { UpstreamError } from '@agentyard/http';
import { isJsonObject } from './conversation.ts';
import type {
  ChatRequest,
  Completion,
  ProviderClient,
  ProviderEndpoint,
  StreamEvent,
  ToolCall,
  ToolCallDelta,
} from './types.ts';
import { num, parseEvent, postForEvents, postForJson, textOf } from './wire.ts';

function requestBody(model: string, request: ChatRequest, stream: boolean): Record<string, unknown> {
  const { messages, temperature, top_p, max_tokens, openAiBody } = request;
  const base = openAiBody ?? { messages, temperature, top_p, max_tokens };
  return { ...base, model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) };
}

function usageOf(body: Record<string, unknown>) {
  const usage = body.usage as Record<string, unknown> | undefined | null;
  if (!usage || typeof usage !== 'object') return null;
  // `prompt_tokens` counts every prompt token, `cached_tokens` of them read from the provider's cache.
  const details = usage.prompt_tokens_details as { cached_tokens?: unknown } | undefined | null;
  return {
    input: num(usage.prompt_tokens),
    output: num(usage.completion_tokens),
    cacheRead: num(details?.cached_tokens),
  };
}

/** The tool calls of an OpenAI message or chunk delta (`tool_calls`), as far as they are well formed; the body itself goes on as is. */
function toolCallsOf(calls: unknown): ToolCallDelta[] {
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((call, i) => {
    if (!isJsonObject(call)) return [];
    const fn = isJsonObject(call.function) ? call.function : {};
    return [
      {
        index: typeof call.index === 'number' ? call.index : i,
        ...(typeof call.id === 'string' ? { id: call.id } : {}),
        ...(typeof fn.name === 'string' && fn.name ? { name: fn.name } : {}),
        arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
      },
    ];
  });
}

/** OpenAI chat completions, as spoken by OpenAI, OpenRouter, Groq and MiniMax. */
export function openAiCompatibleClient(endpoint: ProviderEndpoint): ProviderClient {
  const url = `${endpoint.baseUrl.replace(/\/$/, '')}/chat/completions`;
  const headers = { authorization: `Bearer ${endpoint.apiKey}` };
  return {
    async complete(model, request): Promise<Completion> {
      const body = await postForJson(url, headers, requestBody(model, request, false), endpoint.timeoutMs);
      const choice = Array.isArray(body.choices) ? (body.choices[0] as Record<string, unknown> | undefined) : undefined;
      const message = choice?.message as Record<string, unknown> | undefined;
      if (!message || typeof message !== 'object') throw new UpstreamError('provider sent a malformed body');
      return {
        id: typeof body.id === 'string' ? body.id : '',
        content: textOf(message.content),
        toolCalls: toolCallsOf(message.tool_calls).flatMap((c): ToolCall[] =>
          c.name ? [{ id: c.id ?? '', name: c.name, arguments: c.arguments }] : [],
        ),
        finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'stop',
        usage: usageOf(body),
        openAiBody: body,
      };
    },
    async openStream(model, request) {
      const stream = await postForEvents(url, headers, requestBody(model, request, true), endpoint.streamTimeoutMs);
      return (async function* events(): AsyncGenerator<StreamEvent> {
        let done = false;
        for await (const event of stream) {
          if (event.data === '[DONE]') {
            done = true;
            break;
          }
          const chunk = parseEvent(event.data);
          if (chunk.error) throw new UpstreamError('provider reported an error mid-stream');
          const choice = Array.isArray(chunk.choices)
            ? (chunk.choices[0] as Record<string, unknown> | undefined)
            : undefined;
          const delta = choice?.delta as Record<string, unknown> | undefined;
          // The chunk itself goes on to OpenAI-format callers, finish reason and tool calls included.
          if (delta) {
            const toolCalls = toolCallsOf(delta.tool_calls);
            yield {
              type: 'delta',
              text: textOf(delta.content),
              ...(toolCalls.length ? { toolCalls } : {}),
              openAiChunk: chunk,
            };
          } else if (typeof choice?.finish_reason === 'string') yield { type: 'finish', reason: choice.finish_reason };
          const usage = usageOf(chunk);
          if (usage) yield { type: 'usage', usage };
        }
        if (!done) throw new UpstreamError('stream ended before [DONE]');
      })();
    },
  };
}
