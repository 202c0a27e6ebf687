import type { AiConfig } from '../../config.ts';
import { PROVIDERS, type ProviderName } from '../model-catalog.ts';
import { anthropicClient } from './anthropic.ts';
import { passThroughClient, type PassThroughClient, type PassThroughPath } from './pass-through.ts';
import { geminiClient } from './gemini.ts';
import { openAiCompatibleClient } from './openai-compatible.ts';
import type { ProviderClient, ProviderEndpoint } from './types.ts';

export type {
  ChatRequest,
  ChatTurn,
  Completion,
  ProviderClient,
  StreamEvent,
  TokenUsage,
  ToolCall,
  ToolCallDelta,
} from './types.ts';

const SETTINGS: Record<ProviderName, { url: keyof AiConfig; key: keyof AiConfig }> = {
  openrouter: { url: 'OPENROUTER_BASE_URL', key: 'OPENROUTER_API_KEY' },
  openai: { url: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY' },
  groq: { url: 'GROQ_BASE_URL', key: 'GROQ_API_KEY' },
  anthropic: { url: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY' },
  gemini: { url: 'GEMINI_BASE_URL', key: 'GEMINI_API_KEY' },
  minimax: { url: 'MINIMAX_BASE_URL', key: 'MINIMAX_API_KEY' },
};

const endpointOf = (config: AiConfig, provider: ProviderName, apiKey: string): ProviderEndpoint => ({
  baseUrl: config[SETTINGS[provider].url] as string,
  apiKey,
  timeoutMs: config.PROVIDER_TIMEOUT_MS,
  streamTimeoutMs: config.PROVIDER_STREAM_TIMEOUT_MS,
  defaultMaxTokens: config.DEFAULT_MAX_TOKENS,
});

/** A provider's chat client holding `apiKey`: the platform's, or a user's own for one call (BYOK). */
export function providerClient(config: AiConfig, provider: ProviderName, apiKey: string): ProviderClient {
  const endpoint = endpointOf(config, provider, apiKey);
  const wire = PROVIDERS[provider].wire;
  return wire === 'anthropic'
    ? anthropicClient(endpoint)
    : wire === 'gemini'
      ? geminiClient(endpoint)
      : openAiCompatibleClient(endpoint);
}

/** A client for each provider whose key is configured; the keys stay inside these closures. */
export function providerClients(config: AiConfig): Map<ProviderName, ProviderClient> {
  const clients = new Map<ProviderName, ProviderClient>();
  for (const name of Object.keys(PROVIDERS) as ProviderName[]) {
    const apiKey = config[SETTINGS[name].key] as string | undefined;
    if (apiKey) clients.set(name, providerClient(config, name, apiKey));
  }
  return clients;
}

/** A provider API passed through as callers speak it (Anthropic's Messages; OpenAI's Responses and embeddings), when its provider's key is configured. */
export function passThroughOf(
  config: AiConfig,
  provider: ProviderName,
  path: PassThroughPath,
): PassThroughClient | null {
  const apiKey = config[SETTINGS[provider].key] as string | undefined;
  return apiKey ? passThroughClient(endpointOf(config, provider, apiKey), path) : null;
}

/** The same API holding a user's own key, for one call (BYOK). */
export const passThroughWithKey =
  (config: AiConfig, provider: ProviderName, path: PassThroughPath) => (apiKey: string) =>
    passThroughClient(endpointOf(config, provider, apiKey), path);
