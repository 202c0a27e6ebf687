import type { EventSourceMessage } from 'eventsource-parser';
import type { ProviderEndpoint, TokenUsage } from './types.ts';
import { num, postForEvents, postForJson } from './wire.ts';

/** A provider API spoken as callers speak it (Anthropic Messages, OpenAI Responses, embeddings): bodies pass through, answers come back as sent. */
export interface PassThroughClient {
  send(body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Resolves once the provider accepted the call; yields its Server-Sent Events as they arrive. */
  open(body: Record<string, unknown>): Promise<AsyncGenerator<EventSourceMessage>>;
}

/** The wires passed through, by path: Anthropic's under its base URL's `/v1`, OpenAI's under its base URL (which ends in `/v1`). */
export type PassThroughPath = 'messages' | 'responses' | 'embeddings';

export function passThroughClient(endpoint: ProviderEndpoint, path: PassThroughPath): PassThroughClient {
  const base = endpoint.baseUrl.replace(/\/$/, '');
  const url = path === 'messages' ? `${base}/v1/messages` : `${base}/${path}`;
  const headers: Record<string, string> =
    path === 'messages'
      ? { 'x-api-key': endpoint.apiKey, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${endpoint.apiKey}` };
  return {
    send: (body) =>
      postForJson(url, headers, path === 'embeddings' ? body : { ...body, stream: false }, endpoint.timeoutMs),
    open: (body) => postForEvents(url, headers, { ...body, stream: true }, endpoint.streamTimeoutMs),
  };
}

/**
 * Token usage of an Anthropic `usage` object. Anthropic's `input_tokens` leaves out the prompt
 * tokens read from or written to its cache; ours counts every prompt token, the cache's among them.
 */
export function anthropicUsage(usage: unknown): TokenUsage {
  const u = (usage && typeof usage === 'object' ? usage : {}) as Record<string, unknown>;
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const creation = (u.cache_creation && typeof u.cache_creation === 'object' ? u.cache_creation : {}) as Record<
    string,
    unknown
  >;
  return {
    input: num(u.input_tokens) + cacheRead + cacheWrite,
    output: num(u.output_tokens),
    cacheRead,
    cacheWrite,
    cacheWrite1h: Math.min(num(creation.ephemeral_1h_input_tokens), cacheWrite),
  };
}
