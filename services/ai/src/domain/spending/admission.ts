import type { Plan } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';
import type { CatalogEntry } from '../model-catalog.ts';
import { costOf } from '../prices.ts';
import type { ChatRequest } from '../providers/index.ts';
import type { Hold, SpendCounters } from './privileged/spend-counters.ts';

/** Whose budget a call draws on: a known user on a plan, through one of their agents or not. */
export interface Budget {
  userId: string;
  agentId: string | null;
  plan: Plan;
}

/**
 * Tokens a provider may add around what the body says (Anthropic's tool-use system prompt is a few
 * hundred, chat formatting a few per message): counted on top of the body's bytes.
 */
export const CALL_OVERHEAD_TOKENS = 1024;

/** Message part types whose tokens the body's bytes bound (text) or the model's worst case bounds (images). */
const TEXT_PARTS = new Set(['text', 'refusal']);
const IMAGE_PARTS = new Set(['image_url']);

interface Prompt {
  /** UTF-8 bytes of the body with each image's data left out. */
  bytes: number;
  images: number;
}

/**
 * What a prompt can count for. Every tokenizer the catalog's models use (byte-level BPE: OpenAI's,
 * Llama 3's, DeepSeek's, Claude's, MiniMax's; SentencePiece with byte fallback: Gemini's) makes each
 * token of at least one byte of UTF-8, so a text's UTF-8 length bounds its tokens; the body's JSON
 * (roles, tool declarations, schemas) is counted whole. Images count at the model's worst case;
 * any other part (audio, files) cannot be priced before the call and is refused.
 */
function promptOf(request: ChatRequest): Prompt {
  const body = request.openAiBody;
  if (!body) return { bytes: Buffer.byteLength(JSON.stringify(request.messages)), images: 0 };
  let images = 0;
  const unpriced = new Set<string>();
  const messages = Array.isArray(body.messages)
    ? body.messages.map((message: unknown) => {
        const content = (message as { content?: unknown } | null)?.content;
        if (!Array.isArray(content)) return message;
        return {
          ...(message as object),
          content: content.map((part: unknown) => {
            const type = (part as { type?: unknown } | null)?.type;
            if (typeof type === 'string' && IMAGE_PARTS.has(type)) {
              images++;
              return { type };
            }
            if (typeof type !== 'string' || !TEXT_PARTS.has(type))
              unpriced.add(typeof type === 'string' ? type : 'untyped');
            return part;
          }),
        };
      })
    : body.messages;
  if (unpriced.size) throw AiErrors.unpricedContent([...unpriced]);
  return { bytes: Buffer.byteLength(JSON.stringify({ ...body, messages })), images };
}

/** The output limit the caller named, if any (OpenAI's two spellings, or the backend's `max_tokens`). */
const namedOutputLimit = (request: ChatRequest): number | undefined => {
  const body = request.openAiBody;
  const fromBody =
    body &&
    (typeof body.max_completion_tokens === 'number'
      ? body.max_completion_tokens
      : typeof body.max_tokens === 'number'
        ? body.max_tokens
        : undefined);
  return fromBody ?? request.max_tokens;
};

/** The request as `model` receives it: its output bounded to `limit`, in the field(s) the caller used. */
function boundedTo(request: ChatRequest, limit: number): ChatRequest {
  const body = request.openAiBody;
  if (!body) return { ...request, max_tokens: limit };
  const fields = ['max_completion_tokens', 'max_tokens'].filter((field) => body[field] !== undefined);
  const sent = { ...body };
  for (const field of fields.length ? fields : ['max_tokens']) sent[field] = limit;
  return { ...request, max_tokens: limit, openAiBody: sent };
}

/** An admitted call: its reservation, and the request each candidate model is sent (bounded as reserved). */
export interface Admitted {
  hold: Hold;
  requestFor(model: CatalogEntry): ChatRequest;
}

/**
 * Admission for calls that draw on a budget. A call's output is bounded, per model, to what it
 * asked for (DEFAULT_MAX_TOKENS when it named nothing), never past the model's own ceiling, and
 * that bound is what the provider is sent; its most expensive outcome (the prompt's upper bound
 * and every output token, on the dearest model it may be served by) is reserved before any
 * provider sees it, and only when it fits what is left.
 */
export class SpendAdmission {
  private readonly counters: SpendCounters;
  private readonly defaultMaxTokens: number;

  constructor(counters: SpendCounters, defaultMaxTokens: number) {
    this.counters = counters;
    this.defaultMaxTokens = defaultMaxTokens;
  }

  /** The most a call can cost on any of `candidates`, and the output limit each is sent. Throws 400 for what cannot be priced. */
  maximum(
    candidates: CatalogEntry[],
    request: ChatRequest,
  ): { amountUsd: number; outputLimit: (model: CatalogEntry) => number } {
    const prompt = promptOf(request);
    const named = namedOutputLimit(request);
    const outputLimit = (model: CatalogEntry) =>
      Math.max(1, Math.min(named ?? this.defaultMaxTokens, model.maxOutputTokens));
    const refused = prompt.images > 0 ? candidates.find((m) => m.maxImageTokens === undefined) : undefined;
    if (refused) throw AiErrors.imagesNotAccepted(refused.id);
    const costs = candidates.map(
      (m) =>
        costOf(m, prompt.bytes + CALL_OVERHEAD_TOKENS + prompt.images * (m.maxImageTokens ?? 0), outputLimit(m)) ?? 0,
    );
    return { amountUsd: Math.max(0, ...costs), outputLimit };
  }

  async admit(budget: Budget, candidates: CatalogEntry[], request: ChatRequest): Promise<Admitted> {
    const { amountUsd, outputLimit } = this.maximum(candidates, request);
    const hold = await this.reserve(budget, amountUsd);
    return { hold, requestFor: (model) => boundedTo(request, outputLimit(model)) };
  }

  /** Reserves `amountUsd` (a call's most expensive outcome, priced by its wire) on the budget, or throws why it does not fit. */
  async reserve(budget: Budget, amountUsd: number): Promise<Hold> {
    let answer: Awaited<ReturnType<SpendCounters['reserve']>>;
    try {
      answer = await this.counters.reserve(budget.userId, budget.agentId, budget.plan, amountUsd);
    } catch {
      throw AiErrors.spendUnavailable();
    }
    if (answer === 'credits') throw AiErrors.creditsExhausted();
    if (answer === 'credits-short') throw AiErrors.creditsShort(amountUsd);
    if (answer === 'user-limit')
      throw AiErrors.budgetExceeded(
        `Monthly spending limit reached: this call could cost up to $${amountUsd.toFixed(4)}`,
      );
    if (answer === 'agent-limit')
      throw AiErrors.budgetExceeded(
        `This agent's monthly spending limit is reached: this call could cost up to $${amountUsd.toFixed(4)}`,
      );
    if (answer === 'busy') throw AiErrors.tooManyConcurrentCalls(this.counters.concurrentCallsPerUser);
    return answer;
  }

  /** The output limit a call to `model` is sent: what it asked for (DEFAULT_MAX_TOKENS when nothing), never past the model's ceiling. */
  outputLimitOf(model: CatalogEntry, named: number | undefined): number {
    return Math.max(1, Math.min(named ?? this.defaultMaxTokens, model.maxOutputTokens));
  }

  /** The plan's monthly allowance in USD (usage rows carry it, so the writer knows where credits start). */
  allowanceOf(plan: Plan): number {
    return this.counters.allowanceOf(plan);
  }

  settle(hold: Hold, costUsd: number | null): void {
    this.counters.settle(hold, costUsd ?? 0);
  }
}
