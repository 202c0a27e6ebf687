import { AiErrors } from '../errors.ts';
import type { CatalogEntry } from './model-catalog.ts';
import type { StreamTally, WireSpec } from './pass-through-gateway.ts';
import { worstCostOf } from './prices.ts';
import { anthropicUsage } from './providers/pass-through.ts';
import type { TokenUsage } from './providers/index.ts';
import { CALL_OVERHEAD_TOKENS } from './spending/admission.ts';

/**
 * The fields of an Anthropic Messages body that reach the provider: those priced by tokens alone.
 * Left out: `service_tier` (priority costs more), `container`, `mcp_servers` and
 * `context_management` (work the provider bills apart from tokens).
 */
export const MESSAGES_FIELDS = [
  'model',
  'messages',
  'system',
  'max_tokens',
  'metadata',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'cache_control',
] as const;

/** Content blocks whose tokens the body's bytes bound (the rest are images, counted at the model's worst case, or refused). */
const TEXT_BLOCKS = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking', 'search_result']);
/** Server tools the provider bills per use, beyond tokens. */
const BILLED_TOOLS = /^(web_search|web_fetch|code_execution)/;

interface Prompt {
  bytes: number;
  images: number;
}

/**
 * What a Messages prompt can count for: its UTF-8 bytes (every Claude token is at least a byte)
 * with each image's data left out and counted at the model's worst case instead; a text document
 * counts by its bytes, a PDF or any other block cannot be priced before the call and is refused.
 */
export function messagesPrompt(body: Record<string, unknown>): Prompt {
  let images = 0;
  const unpriced = new Set<string>();
  const block = (part: unknown): unknown => {
    if (!part || typeof part !== 'object') return part;
    const { type } = part as { type?: unknown };
    if (type === 'image') {
      images++;
      return { type };
    }
    if (type === 'tool_result') {
      const content = (part as { content?: unknown }).content;
      return { ...part, content: Array.isArray(content) ? content.map(block) : content };
    }
    if (type === 'document') {
      const source = (part as { source?: { type?: unknown } }).source;
      if (source?.type !== 'text' && source?.type !== 'content') unpriced.add(`document (${String(source?.type)})`);
      return part;
    }
    if (typeof type !== 'string' || !TEXT_BLOCKS.has(type)) unpriced.add(typeof type === 'string' ? type : 'untyped');
    return part;
  };
  const messages = Array.isArray(body.messages)
    ? body.messages.map((message: unknown) => {
        const content = (message as { content?: unknown } | null)?.content;
        return Array.isArray(content) ? { ...(message as object), content: content.map(block) } : message;
      })
    : body.messages;
  const system = Array.isArray(body.system) ? body.system.map(block) : body.system;
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const type = (tool as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && BILLED_TOOLS.test(type)) unpriced.add(type);
  }
  if (unpriced.size) throw AiErrors.unpricedContent([...unpriced]);
  return { bytes: Buffer.byteLength(JSON.stringify({ ...body, messages, system })), images };
}

/** The most a Messages call can cost on `model`: every prompt token possibly a cache write (the dearest prompt rate), and every output token it may produce. */
export function messagesMaximum(model: CatalogEntry, body: Record<string, unknown>, outputLimit: number): number {
  const prompt = messagesPrompt(body);
  if (prompt.images > 0 && model.maxImageTokens === undefined) throw AiErrors.imagesNotAccepted(model.id);
  return (
    worstCostOf(
      model,
      prompt.bytes + CALL_OVERHEAD_TOKENS + prompt.images * (model.maxImageTokens ?? 0),
      outputLimit,
    ) ?? 0
  );
}

/** A stream's usage so far: `message_start` says the prompt's, each `message_delta` the output so far (and, lately, the prompt's again). */
function mergedUsage(known: TokenUsage | null, usage: unknown): TokenUsage {
  const next = anthropicUsage(usage);
  if (!known) return next;
  const prompt = next.input > 0 ? next : known;
  return {
    input: prompt.input,
    cacheRead: prompt.cacheRead,
    cacheWrite: prompt.cacheWrite,
    cacheWrite1h: prompt.cacheWrite1h,
    output: Math.max(known.output, next.output),
  };
}

/** Tool names of an Anthropic answer's content. */
const toolsOf = (content: unknown): string[] =>
  Array.isArray(content)
    ? content.flatMap((b) =>
        (b as { type?: unknown })?.type === 'tool_use' && typeof (b as { name?: unknown }).name === 'string'
          ? [(b as { name: string }).name]
          : [],
      )
    : [];

const userTurns = (body: Record<string, unknown>) =>
  Array.isArray(body.messages)
    ? body.messages.filter((m) => (m as { role?: unknown } | null)?.role === 'user').length
    : 0;

/** Anthropic's Messages API for Claude models (`cache_control` marks pass on). */
export const messagesWire: WireSpec = {
  provider: 'anthropic',
  serves: () => true,
  prepare(model, body) {
    const sent: Record<string, unknown> = {};
    for (const field of MESSAGES_FIELDS) if (body[field] !== undefined) sent[field] = body[field];
    sent.model = model.upstream;
    const limit = Math.max(
      1,
      Math.min(typeof body.max_tokens === 'number' ? body.max_tokens : model.maxOutputTokens, model.maxOutputTokens),
    );
    sent.max_tokens = limit;
    return { sent, maximumUsd: messagesMaximum(model, sent, limit) };
  },
  usageOf: (answer) => (answer.usage && typeof answer.usage === 'object' ? anthropicUsage(answer.usage) : null),
  toolsOf: (answer) => toolsOf(answer.content),
  tally(tally: StreamTally, type, data) {
    if (type === 'message_start')
      tally.usage = mergedUsage(tally.usage, (data.message as { usage?: unknown } | undefined)?.usage);
    else if (type === 'message_delta') tally.usage = mergedUsage(tally.usage, data.usage);
    else if (type === 'content_block_start') tally.tools.push(...toolsOf([data.content_block]));
    else if (type === 'content_block_delta') tally.text += JSON.stringify(data.delta ?? '');
  },
  turns: userTurns,
  estimate: (sent) => Math.ceil(JSON.stringify([sent.system ?? '', sent.messages ?? '']).length / 4),
};
