import type { AiProvider, Plan } from '@agentyard/proto-schemas';

/** Every provider of the provider map; `minimax` is outside the fallback chain. */
export type ProviderName = AiProvider | 'minimax';
export type WireFormat = 'openai' | 'anthropic' | 'gemini';

export interface CatalogEntry {
  id: string;
  name: string;
  provider: ProviderName;
  /** The model name the provider's API expects. */
  upstream: string;
  description: string;
  tags: string[];
  contextWindow: number;
  /** The most output tokens one call can produce (the provider's documented ceiling): a call is never reserved or sent more. */
  maxOutputTokens: number;
  /** The most input tokens one image part can count for on this model (its provider's documented worst case); absent: images are refused. */
  maxImageTokens?: number;
  /** USD per million tokens, overriding the maintained price list where set. */
  price?: { input: number; output: number };
  /** The provider id in @pydantic/genai-prices, where it differs from ours. */
  priceProvider?: string;
}

// Image worst cases: OpenAI high detail at most 8 tiles (gpt-4o, gpt-4.1: 85 + 170 each; gpt-4o-mini
// counts 2,833 + 5,667 each at its lower price); Anthropic resizes to about 1.15 megapixels (~1,600);
// Gemini scales to at most 3072 px a side in 768 px tiles of 258 (16 tiles).
/** The model catalog, ordered from the cheapest general model up: plans take a prefix of it. */
export const MODEL_CATALOG: CatalogEntry[] = [
  {
    id: 'google/gemini-2.5-flash',
    name: 'Gemini 2.5 Flash',
    provider: 'gemini',
    upstream: 'gemini-2.5-flash',
    description: 'Fast, low-cost multimodal model with a long context',
    tags: ['general', 'fast', 'long-context', 'vision'],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    maxImageTokens: 4_128,
    priceProvider: 'google',
  },
  {
    id: 'openai/gpt-4o-mini',
    name: 'GPT-4o mini',
    provider: 'openai',
    upstream: 'gpt-4o-mini',
    description: 'Small, affordable OpenAI model for everyday tasks',
    tags: ['general', 'fast', 'vision'],
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    maxImageTokens: 48_169,
  },
  {
    id: 'meta-llama/llama-3.3-70b-versatile',
    name: 'Llama 3.3 70B',
    provider: 'groq',
    upstream: 'llama-3.3-70b-versatile',
    description: 'Open-weight Llama on Groq hardware: very low latency',
    tags: ['general', 'fast', 'chat'],
    contextWindow: 131_072,
    maxOutputTokens: 32_768,
  },
  {
    id: 'deepseek/deepseek-chat',
    name: 'DeepSeek V3',
    provider: 'openrouter',
    upstream: 'deepseek/deepseek-chat',
    description: 'Strong open model for coding and reasoning, through OpenRouter',
    tags: ['general', 'coding'],
    contextWindow: 163_840,
    maxOutputTokens: 163_840,
    price: { input: 0.3, output: 0.85 },
  },
  {
    id: 'anthropic/claude-haiku-4-5',
    name: 'Claude Haiku 4.5',
    provider: 'anthropic',
    upstream: 'claude-haiku-4-5',
    description: 'Fast Claude model for agents and tool use',
    tags: ['general', 'fast', 'coding'],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    maxImageTokens: 1_600,
  },
  {
    id: 'openai/gpt-4o',
    name: 'GPT-4o',
    provider: 'openai',
    upstream: 'gpt-4o',
    description: 'OpenAI flagship multimodal model',
    tags: ['general', 'vision', 'creative'],
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    maxImageTokens: 1_445,
  },
  {
    id: 'anthropic/claude-sonnet-4-5',
    name: 'Claude Sonnet 4.5',
    provider: 'anthropic',
    upstream: 'claude-sonnet-4-5',
    description: 'Claude for complex agents and coding',
    tags: ['coding', 'reasoning', 'analysis'],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    maxImageTokens: 1_600,
  },
  {
    id: 'google/gemini-2.5-pro',
    name: 'Gemini 2.5 Pro',
    provider: 'gemini',
    upstream: 'gemini-2.5-pro',
    description: 'Gemini for reasoning over long inputs',
    tags: ['reasoning', 'long-context', 'analysis'],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    maxImageTokens: 4_128,
    priceProvider: 'google',
  },
  {
    id: 'openai/gpt-4.1',
    name: 'GPT-4.1',
    provider: 'openai',
    upstream: 'gpt-4.1',
    description: 'OpenAI model for coding and long instructions',
    tags: ['coding', 'long-context'],
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    maxImageTokens: 1_445,
  },
  {
    id: 'anthropic/claude-opus-4-1',
    name: 'Claude Opus 4.1',
    provider: 'anthropic',
    upstream: 'claude-opus-4-1',
    description: 'Most capable Claude model',
    tags: ['reasoning', 'coding', 'analysis', 'creative'],
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    maxImageTokens: 1_600,
  },
  {
    id: 'meta-llama/llama-3.1-8b-instant',
    name: 'Llama 3.1 8B Instant',
    provider: 'groq',
    upstream: 'llama-3.1-8b-instant',
    description: 'Tiny, instant Llama on Groq',
    tags: ['fast', 'chat'],
    contextWindow: 131_072,
    maxOutputTokens: 131_072,
  },
  {
    id: 'minimax/minimax-m1',
    name: 'MiniMax M1',
    provider: 'minimax',
    upstream: 'MiniMax-M1',
    description: 'MiniMax reasoning model (outside the fallback chain)',
    tags: ['reasoning', 'long-context'],
    contextWindow: 1_000_000,
    maxOutputTokens: 80_000,
    price: { input: 0.4, output: 2.2 },
  },
];

export const catalogById = new Map(MODEL_CATALOG.map((m) => [m.id, m]));

/** Embedding models (`/v1/embeddings`), every paid plan's: apart from the chat catalog, whose prefixes make the plans. Output: none. */
export const EMBEDDING_MODELS: CatalogEntry[] = [
  {
    id: 'openai/text-embedding-3-small',
    name: 'Text Embedding 3 Small',
    provider: 'openai',
    upstream: 'text-embedding-3-small',
    description: 'Low-cost OpenAI embeddings',
    tags: ['embedding'],
    contextWindow: 8_191,
    maxOutputTokens: 0,
  },
  {
    id: 'openai/text-embedding-3-large',
    name: 'Text Embedding 3 Large',
    provider: 'openai',
    upstream: 'text-embedding-3-large',
    description: 'Most capable OpenAI embeddings',
    tags: ['embedding'],
    contextWindow: 8_191,
    maxOutputTokens: 0,
  },
];

/** How many models of the catalog (from the top) each plan gets; network gets all. */
const PLAN_MODEL_COUNT: Record<Plan, number> = { solo: 3, collective: 5, label: 7, network: Infinity };

export function modelsForPlan(plan: Plan): CatalogEntry[] {
  return MODEL_CATALOG.slice(0, PLAN_MODEL_COUNT[plan]);
}

export interface ProviderSpec {
  wire: WireFormat;
  /** Models this provider's errors fall back to, first the primary's fallback. */
  primary: string;
  fallback: string;
  inChain: boolean;
}

/** The provider map: each provider's wire format, primary and fallback model. */
export const PROVIDERS: Record<ProviderName, ProviderSpec> = {
  openrouter: {
    wire: 'openai',
    primary: 'deepseek/deepseek-chat',
    fallback: 'meta-llama/llama-3.3-70b-versatile',
    inChain: true,
  },
  gemini: { wire: 'gemini', primary: 'google/gemini-2.5-flash', fallback: 'openai/gpt-4o-mini', inChain: true },
  groq: {
    wire: 'openai',
    primary: 'meta-llama/llama-3.3-70b-versatile',
    fallback: 'google/gemini-2.5-flash',
    inChain: true,
  },
  anthropic: {
    wire: 'anthropic',
    primary: 'anthropic/claude-sonnet-4-5',
    fallback: 'openai/gpt-4o-mini',
    inChain: true,
  },
  openai: { wire: 'openai', primary: 'openai/gpt-4o-mini', fallback: 'google/gemini-2.5-flash', inChain: true },
  minimax: { wire: 'openai', primary: 'minimax/minimax-m1', fallback: 'google/gemini-2.5-flash', inChain: false },
};

/** Models the task types prefer, by tag; `general` and unknown types take the plan's first model. */
export function selectModel(allowed: CatalogEntry[], taskType: string): CatalogEntry | undefined {
  return allowed.find((m) => m.tags.includes(taskType)) ?? allowed[0];
}

/** The fallback for a failed call on `model`: its provider's fallback model, if the plan allows it and it is another model. */
export function fallbackFor(model: CatalogEntry, allowed: CatalogEntry[]): CatalogEntry | undefined {
  const spec = PROVIDERS[model.provider];
  const candidate = model.id === spec.fallback ? undefined : catalogById.get(spec.fallback);
  return candidate && allowed.some((m) => m.id === candidate.id) ? candidate : undefined;
}
