import { UpstreamError } from '@agentyard/http';
import { anthropicUsage } from './pass-through.ts';
import { AnthropicToolStream, anthropicAnswer, anthropicTurns } from './anthropic-tools.ts';
import { conversationOf } from './conversation.ts';
import type { ChatRequest, Completion, ProviderClient, ProviderEndpoint, StreamEvent, ToolCallDelta } from './types.ts';
import { num, parseEvent, postForEvents, postForJson } from './wire.ts';

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
};

function requestBody(model: string, request: ChatRequest, maxTokens: number, stream: boolean) {
  return {
    model,
    max_tokens: request.max_tokens ?? maxTokens,
    ...anthropicTurns(conversationOf(request)),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/** Anthropic Messages API, plain and streamed, tool calls included. */
export function anthropicClient(endpoint: ProviderEndpoint): ProviderClient {
  const url = `${endpoint.baseUrl.replace(/\/$/, '')}/v1/messages`;
  const headers = { 'x-api-key': endpoint.apiKey, 'anthropic-version': '2023-06-01' };
  return {
    async complete(model, request): Promise<Completion> {
      const body = await postForJson(
        url,
        headers,
        requestBody(model, request, endpoint.defaultMaxTokens, false),
        endpoint.timeoutMs,
      );
      if (!Array.isArray(body.content)) throw new UpstreamError('provider sent a malformed body');
      const answer = anthropicAnswer(body.content);
      const usage = body.usage as Record<string, unknown> | undefined;
      return {
        id: typeof body.id === 'string' ? body.id : '',
        content: answer.text,
        toolCalls: answer.toolCalls,
        finishReason: answer.toolCalls.length ? 'tool_calls' : (STOP_REASONS[String(body.stop_reason)] ?? 'stop'),
        usage: usage && typeof usage === 'object' ? anthropicUsage(usage) : null,
      };
    },
    async openStream(model, request) {
      const stream = await postForEvents(
        url,
        headers,
        requestBody(model, request, endpoint.defaultMaxTokens, true),
        endpoint.streamTimeoutMs,
      );
      return (async function* events(): AsyncGenerator<StreamEvent> {
        const tools = new AnthropicToolStream();
        const toolEvent = (call: ToolCallDelta | null): StreamEvent | null =>
          call ? { type: 'delta', text: '', toolCalls: [call] } : null;
        let prompt = anthropicUsage({});
        let output = 0;
        let stopped = false;
        for await (const event of stream) {
          const data = parseEvent(event.data);
          const type = event.event ?? data.type;
          let toolCall: StreamEvent | null = null;
          if (type === 'error') throw new UpstreamError('provider reported an error mid-stream');
          if (type === 'message_start')
            prompt = anthropicUsage((data.message as { usage?: unknown } | undefined)?.usage);
          else if (type === 'content_block_start') toolCall = toolEvent(tools.start(data.index, data.content_block));
          else if (type === 'content_block_delta') {
            const delta = data.delta as { type?: string; text?: unknown; partial_json?: unknown } | undefined;
            if (delta?.type === 'text_delta' && typeof delta.text === 'string')
              yield { type: 'delta', text: delta.text };
            else if (delta?.type === 'input_json_delta')
              toolCall = toolEvent(tools.delta(data.index, delta.partial_json));
          } else if (type === 'content_block_stop') toolCall = toolEvent(tools.stop(data.index));
          else if (type === 'message_delta') {
            output = num((data.usage as { output_tokens?: unknown } | undefined)?.output_tokens);
            const reason = (data.delta as { stop_reason?: unknown } | undefined)?.stop_reason;
            if (typeof reason === 'string')
              yield { type: 'finish', reason: tools.called ? 'tool_calls' : (STOP_REASONS[reason] ?? 'stop') };
          } else if (type === 'message_stop') {
            stopped = true;
            break;
          }
          if (toolCall) yield toolCall;
        }
        if (!stopped) throw new UpstreamError('stream ended before message_stop');
        yield { type: 'usage', usage: { ...prompt, output } };
      })();
    },
  };
}
