import { AiErrors } from '../errors.ts';
import type { CatalogEntry } from './model-catalog.ts';
import type { StreamTally, WireSpec } from './pass-through-gateway.ts';
import { costOf, worstCostOf } from './prices.ts';
import type { TokenUsage } from './providers/index.ts';
import { num } from './providers/wire.ts';
import { CALL_OVERHEAD_TOKENS } from './spending/admission.ts';

/**
 * The fields of an OpenAI Responses body that reach OpenAI: those priced by tokens alone. Left out:
 * `service_tier`, `background`, `include`, `prompt` (a stored template: unseen tokens), and
 * `previous_response_id` / `conversation`, which are refused (state kept under the platform's key,
 * of unseen size, that another caller could name). `store` is always false for the same reason.
 */
const RESPONSES_FIELDS = [
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'metadata',
  'user',
  'truncation',
] as const;
const STATEFUL_FIELDS = ['previous_response_id', 'conversation', 'prompt'] as const;
/** Input content parts whose tokens the body's bytes bound; `input_image` counts at the model's worst case; any other is refused. */
const TEXT_PARTS = new Set(['input_text', 'output_text', 'refusal', 'summary_text', 'reasoning_text']);
/** Input items (other than messages) whose tokens the body's bytes bound. */
const TEXT_ITEMS = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'custom_tool_call',
  'custom_tool_call_output',
]);
/** Tools the model calls back to the caller; every other (web or file search, code interpreter, image generation, MCP) is billed per use. */
const CALLER_TOOLS = new Set(['function', 'custom']);

/** What a Responses prompt can count for: its UTF-8 bytes with each image's data left out, and its images. */
export function responsesPrompt(body: Record<string, unknown>): { bytes: number; images: number } {
  let images = 0;
  const unpriced = new Set<string>();
  for (const field of STATEFUL_FIELDS) if (body[field] !== undefined && body[field] !== null) unpriced.add(field);
  const part = (p: unknown): unknown => {
    const type = (p as { type?: unknown } | null)?.type;
    if (type === 'input_image') {
      images++;
      return { type };
    }
    if (typeof type !== 'string' || !TEXT_PARTS.has(type))
      unpriced.add(typeof type === 'string' ? type : 'untyped part');
    return p;
  };
  const item = (i: unknown): unknown => {
    if (!i || typeof i !== 'object') return i;
    const { type, content, output } = i as { type?: unknown; content?: unknown; output?: unknown };
    const kind = typeof type === 'string' ? type : 'message'; // an item with a role and no type is a message
    if (!TEXT_ITEMS.has(kind)) unpriced.add(kind);
    return {
      ...i,
      ...(Array.isArray(content) ? { content: content.map(part) } : {}),
      ...(Array.isArray(output) ? { output: output.map(part) } : {}),
    };
  };
  const input = Array.isArray(body.input) ? body.input.map(item) : body.input;
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const type = (tool as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !CALLER_TOOLS.has(type))
      unpriced.add(typeof type === 'string' ? type : 'untyped tool');
  }
  if (unpriced.size) throw AiErrors.unpricedContent([...unpriced]);
  return { bytes: Buffer.byteLength(JSON.stringify({ ...body, input })), images };
}

/** OpenAI's usage: `input_tokens` counts every prompt token, `cached_tokens` of them read from its cache (which it writes at no extra cost). */
export function responsesUsage(usage: unknown): TokenUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as {
    input_tokens?: unknown;
    output_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown };
  };
  return {
    input: num(u.input_tokens),
    output: num(u.output_tokens),
    cacheRead: num(u.input_tokens_details?.cached_tokens),
  };
}

const toolsOf = (output: unknown): string[] =>
  Array.isArray(output)
    ? output.flatMap((i) =>
        (i as { type?: unknown })?.type === 'function_call' && typeof (i as { name?: unknown }).name === 'string'
          ? [(i as { name: string }).name]
          : [],
      )
    : [];

/** A factory so the default output bound (DEFAULT_MAX_TOKENS) is the service's. */
export function responsesWire(defaultMaxTokens: number): WireSpec {
  return {
    provider: 'openai',
    serves: () => true,
    prepare(model: CatalogEntry, body) {
      const sent: Record<string, unknown> = {};
      for (const field of RESPONSES_FIELDS) if (body[field] !== undefined) sent[field] = body[field];
      sent.model = model.upstream;
      sent.store = false;
      const named = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : defaultMaxTokens;
      const limit = Math.max(16, Math.min(named, model.maxOutputTokens)); // OpenAI's own floor is 16
      sent.max_output_tokens = limit;
      const prompt = responsesPrompt({ ...sent, ...Object.fromEntries(STATEFUL_FIELDS.map((f) => [f, body[f]])) });
      if (prompt.images > 0 && model.maxImageTokens === undefined) throw AiErrors.imagesNotAccepted(model.id);
      return {
        sent,
        maximumUsd:
          worstCostOf(
            model,
            prompt.bytes + CALL_OVERHEAD_TOKENS + prompt.images * (model.maxImageTokens ?? 0),
            limit,
          ) ?? 0,
      };
    },
    usageOf: (answer) => responsesUsage(answer.usage),
    toolsOf: (answer) => toolsOf(answer.output),
    tally(tally: StreamTally, type, data) {
      if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed')
        tally.usage = responsesUsage((data.response as { usage?: unknown } | undefined)?.usage) ?? tally.usage;
      else if (type === 'response.output_item.added') tally.tools.push(...toolsOf([data.item]));
      else if (type === 'response.output_text.delta' && typeof data.delta === 'string') tally.text += data.delta;
    },
    turns: (sent) =>
      Array.isArray(sent.input)
        ? sent.input.filter((i) => (i as { role?: unknown } | null)?.role === 'user').length
        : 1,
    estimate: (sent) => Math.ceil(JSON.stringify([sent.instructions ?? '', sent.input ?? '']).length / 4),
  };
}

/** Tokens an embeddings input can count for: each text's UTF-8 bytes, each token array's length. */
function embeddingTokensBound(input: unknown): number {
  const one = (value: unknown): number =>
    typeof value === 'string'
      ? Buffer.byteLength(value)
      : typeof value === 'number'
        ? 1
        : Array.isArray(value)
          ? value.reduce((n: number, v) => n + one(v), 0)
          : 0;
  return one(input);
}

/** OpenAI's embeddings: priced by input tokens alone. */
export const embeddingsWire: WireSpec = {
  provider: 'openai',
  serves: (model) => model.tags.includes('embedding'),
  prepare(model, body) {
    const sent: Record<string, unknown> = { model: model.upstream, input: body.input };
    for (const field of ['encoding_format', 'dimensions', 'user'])
      if (body[field] !== undefined) sent[field] = body[field];
    return { sent, maximumUsd: costOf(model, embeddingTokensBound(body.input), 0) ?? 0 };
  },
  usageOf: (answer) => {
    const usage = answer.usage as { prompt_tokens?: unknown } | undefined;
    return usage && typeof usage === 'object' ? { input: num(usage.prompt_tokens), output: 0 } : null;
  },
  toolsOf: () => [],
  tally: () => {},
  turns: () => 0,
  estimate: (sent) => Math.ceil(embeddingTokensBound(sent.input) / 4),
};
