import { Type } from 'typebox';
import { ConfigError, loadConfig, Secret } from '@agentyard/config';

const baseUrl = (url: string, description: string) => Type.String({ default: url, description });
const apiKey = (name: string) =>
  Type.Optional(Secret({ minLength: 1, description: `${name} API key; unset marks its models unavailable` }));

/** Settings of the AI gateway: providers, timeouts, usage writing, demo chat, quotas, Stripe. */
export const aiSettings = {
  OPENROUTER_BASE_URL: baseUrl('https://openrouter.ai/api/v1', 'OpenRouter (OpenAI-compatible) base URL'),
  OPENROUTER_API_KEY: apiKey('OpenRouter'),
  OPENAI_BASE_URL: baseUrl('https://api.openai.com/v1', 'OpenAI base URL'),
  OPENAI_API_KEY: apiKey('OpenAI'),
  GROQ_BASE_URL: baseUrl('https://api.groq.com/openai/v1', 'Groq (OpenAI-compatible) base URL'),
  GROQ_API_KEY: apiKey('Groq'),
  ANTHROPIC_BASE_URL: baseUrl('https://api.anthropic.com', 'Anthropic Messages API base URL'),
  ANTHROPIC_API_KEY: apiKey('Anthropic'),
  GEMINI_BASE_URL: baseUrl('https://generativelanguage.googleapis.com', 'Gemini API base URL'),
  GEMINI_API_KEY: apiKey('Gemini'),
  MINIMAX_BASE_URL: baseUrl(
    'https://api.minimax.io/v1',
    'MiniMax (OpenAI-compatible) base URL; outside the fallback chain',
  ),
  MINIMAX_API_KEY: apiKey('MiniMax'),
  PROVIDER_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 60_000,
    description: 'deadline of a non-streamed provider call',
  }),
  PROVIDER_STREAM_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 300_000,
    description: 'deadline of a streamed provider call, start to end',
  }),
  ENCRYPTION_KEYS: Secret({
    minLength: 40,
    description: "AES-256-GCM keys `id:base64key,...`, first is current: users' own provider keys (BYOK) at rest",
  }),
  PROVIDER_RETRIES: Type.Integer({
    minimum: 0,
    maximum: 5,
    default: 2,
    description: 'tries after the first of one model whose provider answered 429 or 5xx, before its fallback',
  }),
  PROVIDER_RETRY_BASE_MS: Type.Integer({
    minimum: 1,
    default: 250,
    description:
      "the first retry's backoff ceiling in ms, doubled for each later one (full jitter: a random wait below it)",
  }),
  PROVIDER_RETRY_DEADLINE_MS: Type.Integer({
    minimum: 0,
    default: 10_000,
    description: 'no provider retry starts later than this after a call was admitted (the fallback is still tried)',
  }),
  HEALTH_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 5000,
    description: 'deadline of the provider reachability check',
  }),
  DEFAULT_MAX_TOKENS: Type.Integer({
    minimum: 1,
    default: 4096,
    description:
      "output limit of a budgeted call that names none (sent to the provider and reserved; at most the model's own ceiling), and max_tokens sent to providers that require one (Anthropic)",
  }),
  HIBERNATE_ACTIVITY_EVERY_MS: Type.Integer({
    minimum: 100,
    default: 10_000,
    description:
      "a hosted agent's model calls count as its activity (it is in a turn: not hibernated); written to Redis at most this often per agent and process",
  }),
  USAGE_FLUSH_MS: Type.Integer({
    minimum: 10,
    default: 1000,
    description: 'how often buffered usage rows are written',
  }),
  USAGE_BATCH_SIZE: Type.Integer({
    minimum: 1,
    default: 500,
    description: 'buffered usage rows that trigger a write at once',
  }),
  USAGE_BUFFER_LIMIT: Type.Integer({
    minimum: 100,
    default: 100_000,
    description: 'usage rows kept while the database is unreachable; beyond it the oldest are dropped (logged)',
  }),
  DEMO_MODELS: Type.String({
    default: 'google/gemini-2.5-flash,openai/gpt-4o-mini,meta-llama/llama-3.3-70b-versatile',
    description: 'comma-separated model ids of the demo chat, first is the default',
  }),
  DEMO_DAILY_SPEND_CAP_USD: Type.Number({
    minimum: 0,
    default: 5,
    description: 'demo chat stops (503) once its cost today (UTC) reaches this',
  }),
  QUOTAS_ENFORCED: Type.Boolean({
    default: false,
    description: "refuse calls over the plan's monthly token quota with 429 QUOTA_EXCEEDED",
  }),
  GBP_TO_USD: Type.Number({
    minimum: 0,
    default: 1.27,
    description: "rate for the cost dashboard's planMonthlyCost (plan prices are in GBP)",
  }),
  SPENDING_ENFORCED: Type.Boolean({
    default: true,
    description:
      "reserve each budgeted AI call's maximum cost at admission (402 CREDITS_EXHAUSTED / BUDGET_EXCEEDED when it does not fit what is left)",
  }),
  PLAN_MONTHLY_ALLOWANCE_USD: Type.String({
    default: 'solo:5,collective:15,label:40,network:150',
    pattern: '^\\s*[a-z]+:\\d+(\\.\\d+)?\\s*(,\\s*[a-z]+:\\d+(\\.\\d+)?\\s*)*$',
    description: 'AI spend (USD) each plan includes per calendar month (UTC); beyond it calls draw on credits',
  }),
  SPEND_BUDGET_TTL_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description:
      "how long the gateway trusts its Redis copy of a user's credits and limits before reading them again (changes also drop it at once)",
  }),
  SPEND_CONCURRENT_CALLS_PER_USER: Type.Integer({
    minimum: 1,
    default: 16,
    description:
      'budgeted AI calls one user may have open at once (each holds a reservation); more are refused with 429 TOO_MANY_CONCURRENT_CALLS',
  }),
  BILLING_PROVIDER: Type.Optional(
    Type.Union([Type.Literal('stripe'), Type.Literal('local')], {
      description:
        'stripe, or local (a development checkout on the platform itself; refused in production). Default: stripe when STRIPE_SECRET_KEY is set, else local outside production',
    }),
  ),
  STRIPE_SECRET_KEY: Type.Optional(
    Secret({ minLength: 8, description: 'Stripe API secret key (sk_...); needed by BILLING_PROVIDER=stripe' }),
  ),
  STRIPE_API_BASE: baseUrl(
    'https://api.stripe.com',
    'Stripe API base URL (tests: a local server speaking the Stripe API)',
  ),
  STRIPE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'deadline of one Stripe API call' }),
  STRIPE_PRICE_SOLO: Type.String({ default: '', description: 'Stripe price id (price_...) of the solo plan' }),
  STRIPE_PRICE_COLLECTIVE: Type.String({ default: '', description: 'Stripe price id of the collective plan' }),
  STRIPE_PRICE_LABEL: Type.String({ default: '', description: 'Stripe price id of the label plan' }),
  STRIPE_PRICE_NETWORK: Type.String({ default: '', description: 'Stripe price id of the network plan' }),
  LOCAL_CHECKOUT_TTL_SECONDS: Type.Integer({
    minimum: 60,
    default: 3600,
    description: 'how long a development checkout link stays usable',
  }),
  GATEWAY_PLUGIN_PRICES_USD: Type.String({
    default: 'agent:0.01,generate-text:0.002,summarize:0.002',
    pattern: '^\\s*[a-z-]+:\\d+(\\.\\d+)?\\s*(,\\s*[a-z-]+:\\d+(\\.\\d+)?\\s*)*$',
    description:
      "fee (USD) of one POST /api/v1/gateway call per plugin, on top of the AI spend of the call itself; paid from the plan's allowance, then credits",
  }),
  GATEWAY_CORS_ORIGINS: Type.String({
    default: '',
    description:
      'comma-separated origins whose browsers may call POST /api/v1/gateway cross-origin (CORS); empty: none',
  }),
  GATEWAY_AGENT_TURN_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 200_000,
    description:
      "deadline of the agents service's answer to a gateway `agent` call; longer than its AGENT_CHAT_TIMEOUT_MS (180 s), so its own 504 arrives first",
  }),
  PAGE_FETCH_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 10_000,
    description: 'deadline of fetching a page to summarize or extract, redirects and body included',
  }),
  PAGE_FETCH_MAX_BYTES: Type.Integer({
    minimum: 1024,
    default: 2 * 1024 * 1024,
    description: 'largest page (bytes) the summarizer reads; larger pages are refused',
  }),
  PAGE_FETCH_TEST_HOSTS: Type.String({
    default: '',
    description:
      'comma-separated host names under .test that the page fetcher resolves to 127.0.0.1 and lets through (local test servers); refused under NODE_ENV=production',
  }),
  STRIPE_WEBHOOK_SECRET: Type.Optional(
    Secret({ minLength: 8, description: 'Stripe webhook signing secret (whsec_...); unset refuses webhooks' }),
  ),
};

export function loadAiConfig(env?: Record<string, string | undefined>) {
  const config = loadConfig(aiSettings, env ? { env, files: false } : {});
  const testHosts = config.PAGE_FETCH_TEST_HOSTS.split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  if (testHosts.some((host) => !/^[a-z0-9-]+(\.[a-z0-9-]+)*\.test$/i.test(host)))
    throw new ConfigError(
      'Invalid configuration:\n  PAGE_FETCH_TEST_HOSTS: each name must end in .test (a reserved domain that resolves nowhere)',
    );
  if (config.NODE_ENV === 'production' && testHosts.length > 0)
    throw new ConfigError(
      'Invalid configuration:\n  PAGE_FETCH_TEST_HOSTS: lets the page fetcher reach loopback and is refused under NODE_ENV=production',
    );
  return { ...config, BILLING_PROVIDER: billingProviderOf(config) };
}

/**
 * The billing provider: as set, else stripe with a key and local without one. Production refuses
 * local (it hands out plans for a button press) and stripe without a key.
 */
function billingProviderOf(config: {
  NODE_ENV: string;
  BILLING_PROVIDER?: 'stripe' | 'local';
  STRIPE_SECRET_KEY?: string;
}): 'stripe' | 'local' {
  const provider =
    config.BILLING_PROVIDER ?? (config.STRIPE_SECRET_KEY || config.NODE_ENV === 'production' ? 'stripe' : 'local');
  if (config.NODE_ENV === 'production' && provider === 'local')
    throw new ConfigError(
      'Invalid configuration:\n  BILLING_PROVIDER: local is a development checkout and is refused under NODE_ENV=production',
    );
  if (provider === 'stripe' && !config.STRIPE_SECRET_KEY && config.NODE_ENV === 'production')
    throw new ConfigError('Invalid configuration:\n  STRIPE_SECRET_KEY: required by BILLING_PROVIDER=stripe');
  return provider;
}

export type AiConfig = ReturnType<typeof loadAiConfig>;
