/**
 * The fields of a hosted agent's OpenAI-format body that reach a provider: those the gateway
 * understands and accounts for. Everything else stays here: `n` (more choices, more cost; providers
 * default to one), `service_tier`, `store`, `metadata`, OpenRouter's `models`/`route`/`provider`/
 * `plugins`/`transforms` (other models, web search), `web_search_options`, `audio`, `prediction`,
 * `reasoning_effort`, `logit_bias`, `logprobs` and whatever a provider adds next.
 */
export const FORWARDED_FIELDS = [
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'seed',
  'user',
  'presence_penalty',
  'frequency_penalty',
] as const;

export function forwardedBody(body: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const field of FORWARDED_FIELDS) if (body[field] !== undefined) kept[field] = body[field];
  return kept;
}
