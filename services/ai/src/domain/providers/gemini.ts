import { UpstreamError } from '@agentyard/http';
import { conversationOf } from './conversation.ts';
import { GeminiAnswer, geminiTurns, MALFORMED_CALL_REASONS } from './gemini-tools.ts';
import type {
  ChatRequest,
  Completion,
  ProviderClient,
  ProviderEndpoint,
  StreamEvent,
  TokenUsage,
  ToolCall,
} from './types.ts';
import { num, parseEvent, postForEvents, postForJson } from './wire.ts';

const FINISH_REASONS: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
};

function requestBody(request: ChatRequest) {
  const generationConfig = {
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.top_p !== undefined ? { topP: request.top_p } : {}),
    ...(request.max_tokens !== undefined ? { maxOutputTokens: request.max_tokens } : {}),
  };
  return {
    ...geminiTurns(conversationOf(request)),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

interface Candidate {
  content?: { parts?: unknown };
  finishReason?: string;
}
interface Chunk {
  text: string;
  toolCalls: (ToolCall & { index: number })[];
  finishReason?: string;
  usage: TokenUsage | null;
  id: string;
}

function readChunk(body: Record<string, unknown>, answer: GeminiAnswer): Chunk {
  const candidate = (Array.isArray(body.candidates) ? body.candidates[0] : undefined) as Candidate | undefined;
  if (candidate?.finishReason && MALFORMED_CALL_REASONS.has(candidate.finishReason))
    throw new UpstreamError('provider sent a malformed tool call');
  const meta = body.usageMetadata as Record<string, unknown> | undefined;
  return {
    ...answer.read(candidate?.content?.parts),
    finishReason: candidate?.finishReason,
    usage:
      meta && typeof meta === 'object'
        ? { input: num(meta.promptTokenCount), output: num(meta.candidatesTokenCount) }
        : null,
    id: typeof body.responseId === 'string' ? body.responseId : '',
  };
}

const finishReason = (reason: string | undefined, answer: GeminiAnswer) =>
  answer.called && (reason ?? 'STOP') === 'STOP' ? 'tool_calls' : (FINISH_REASONS[reason ?? 'STOP'] ?? 'stop');

/** Gemini generateContent and streamGenerateContent (SSE), function calls included. */
export function geminiClient(endpoint: ProviderEndpoint): ProviderClient {
  const base = `${endpoint.baseUrl.replace(/\/$/, '')}/v1beta/models`;
  const headers = { 'x-goog-api-key': endpoint.apiKey };
  return {
    async complete(model, request): Promise<Completion> {
      const body = await postForJson(
        `${base}/${encodeURIComponent(model)}:generateContent`,
        headers,
        requestBody(request),
        endpoint.timeoutMs,
      );
      if (!Array.isArray(body.candidates) || body.candidates.length === 0)
        throw new UpstreamError('provider sent a malformed body');
      const answer = new GeminiAnswer();
      const chunk = readChunk(body, answer);
      return {
        id: chunk.id,
        content: chunk.text,
        toolCalls: chunk.toolCalls.map(({ index: _index, ...call }) => call),
        finishReason: finishReason(chunk.finishReason, answer),
        usage: chunk.usage,
      };
    },
    async openStream(model, request) {
      const stream = await postForEvents(
        `${base}/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`,
        headers,
        requestBody(request),
        endpoint.streamTimeoutMs,
      );
      return (async function* events(): AsyncGenerator<StreamEvent> {
        const answer = new GeminiAnswer();
        let usage: TokenUsage | null = null;
        let finished = false;
        for await (const event of stream) {
          const body = parseEvent(event.data);
          if (body.error) throw new UpstreamError('provider reported an error mid-stream');
          const chunk = readChunk(body, answer);
          if (chunk.text || chunk.toolCalls.length)
            yield {
              type: 'delta',
              text: chunk.text,
              ...(chunk.toolCalls.length ? { toolCalls: chunk.toolCalls } : {}),
            };
          if (chunk.usage) usage = chunk.usage;
          if (chunk.finishReason) {
            finished = true;
            yield { type: 'finish', reason: finishReason(chunk.finishReason, answer) };
          }
        }
        if (!finished) throw new UpstreamError('stream ended without a finish reason');
        if (usage) yield { type: 'usage', usage };
      })();
    },
  };
}
