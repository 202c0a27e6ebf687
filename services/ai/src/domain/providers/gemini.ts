import { UpstreamError } from '@agentyard/http';
import type { ChatRequest, Completion, ProviderClient, ProviderEndpoint, StreamEvent, TokenUsage } from './types.ts';
import { num, parseEvent, postJson, readJson, serverSentEvents, turnsOf } from './wire.ts';

const FINISH_REASONS: Record<string, string> = { STOP: 'stop', MAX_TOKENS: 'length', SAFETY: 'content_filter', RECITATION: 'content_filter' };

function requestBody(request: ChatRequest) {
  const turns = request.openAiBody ? turnsOf(request.openAiBody.messages) : request.messages;
  const system = turns.filter((t) => t.role === 'system').map((t) => t.content).join('\n\n');
  const generationConfig = {
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.top_p !== undefined ? { topP: request.top_p } : {}),
    ...(request.max_tokens !== undefined ? { maxOutputTokens: request.max_tokens } : {}),
  };
  return {
    contents: turns.filter((t) => t.role !== 'system' && t.content !== '')
      .map((t) => ({ role: t.role === 'assistant' ? 'model' : 'user', parts: [{ text: t.content }] })),
    ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

interface Candidate { content?: { parts?: { text?: unknown }[] }; finishReason?: string }

function readChunk(body: Record<string, unknown>): { text: string; finishReason?: string; usage: TokenUsage | null; id: string } {
  const candidate = (Array.isArray(body.candidates) ? body.candidates[0] : undefined) as Candidate | undefined;
  const meta = body.usageMetadata as Record<string, unknown> | undefined;
  return {
    text: (candidate?.content?.parts ?? []).map((p) => (typeof p?.text === 'string' ? p.text : '')).join(''),
    finishReason: candidate?.finishReason,
    usage: meta && typeof meta === 'object' ? { input: num(meta.promptTokenCount), output: num(meta.candidatesTokenCount) } : null,
    id: typeof body.responseId === 'string' ? body.responseId : '',
  };
}

/** Gemini generateContent and streamGenerateContent (SSE). */
export function geminiClient(endpoint: ProviderEndpoint): ProviderClient {
  const base = `${endpoint.baseUrl.replace(/\/$/, '')}/v1beta/models`;
  const headers = { 'x-goog-api-key': endpoint.apiKey };
  return {
    async complete(model, request): Promise<Completion> {
      const body = await readJson(await postJson(`${base}/${encodeURIComponent(model)}:generateContent`, headers, requestBody(request), endpoint.timeoutMs));
      if (!Array.isArray(body.candidates) || body.candidates.length === 0) throw new UpstreamError('provider sent a malformed body');
      const chunk = readChunk(body);
      return { id: chunk.id, content: chunk.text, finishReason: FINISH_REASONS[chunk.finishReason ?? 'STOP'] ?? 'stop', usage: chunk.usage };
    },
    async openStream(model, request) {
      const response = await postJson(`${base}/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`, headers, requestBody(request), endpoint.streamTimeoutMs);
      return (async function* events(): AsyncGenerator<StreamEvent> {
        let usage: TokenUsage | null = null;
        let finished = false;
        for await (const event of serverSentEvents(response)) {
          const body = parseEvent(event.data);
          if (body.error) throw new UpstreamError('provider reported an error mid-stream');
          const chunk = readChunk(body);
          if (chunk.text) yield { type: 'delta', text: chunk.text };
          if (chunk.usage) usage = chunk.usage;
          if (chunk.finishReason) { finished = true; yield { type: 'finish', reason: FINISH_REASONS[chunk.finishReason] ?? 'stop' }; }
        }
        if (!finished) throw new UpstreamError('stream ended without a finish reason');
        if (usage) yield { type: 'usage', usage };
      })();
    },
  };
}
