import type { AiConfig } from '../../config.ts';
import { PROVIDERS, type ProviderName } from '../model-catalog.ts';
import { anthropicClient } from './anthropic.ts';
import { geminiClient } from './gemini.ts';
import { openAiCompatibleClient } from './openai-compatible.ts';
import type { ProviderClient, ProviderEndpoint } from './types.ts';

export type { ChatRequest, ChatTurn, Completion, ProviderClient, StreamEvent, TokenUsage, ToolCall, ToolCallDelta } from './types.ts';

const SETTINGS: Record<ProviderName, { url: keyof AiConfig; key: keyof AiConfig }> = {
  openrouter: { url: 'OPENROUTER_BASE_URL', key: 'OPENROUTER_API_KEY' },
  openai: { url: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY' },
  groq: { url: 'GROQ_BASE_URL', key: 'GROQ_API_KEY' },
  anthropic: { url: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY' },
  gemini: { url: 'GEMINI_BASE_URL', key: 'GEMINI_API_KEY' },
  minimax: { url: 'MINIMAX_BASE_URL', key: 'MINIMAX_API_KEY' },
};

/** A client for each provider whose key is configured; the keys stay inside these closures. */
export function providerClients(config: AiConfig): Map<ProviderName, ProviderClient> {
  const clients = new Map<ProviderName, ProviderClient>();
  for (const [name, spec] of Object.entries(PROVIDERS) as [ProviderName, (typeof PROVIDERS)[ProviderName]][]) {
    const apiKey = config[SETTINGS[name].key] as string | undefined;
    if (!apiKey) continue;
    const endpoint: ProviderEndpoint = {
      baseUrl: config[SETTINGS[name].url] as string,
      apiKey,
      timeoutMs: config.PROVIDER_TIMEOUT_MS,
      streamTimeoutMs: config.PROVIDER_STREAM_TIMEOUT_MS,
      defaultMaxTokens: config.DEFAULT_MAX_TOKENS,
    };
    clients.set(name, spec.wire === 'anthropic' ? anthropicClient(endpoint) : spec.wire === 'gemini' ? geminiClient(endpoint) : openAiCompatibleClient(endpoint));
  }
  return clients;
}
