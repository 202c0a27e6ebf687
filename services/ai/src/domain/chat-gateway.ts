import { HttpError, UpstreamError } from '@agentyard/http';
import { ProviderRefusal } from './providers/wire.ts';
import { metrics } from '@agentyard/observability';
import { AiErrors } from '../errors.ts';
import { fallbackFor, type CatalogEntry, type ProviderName } from './model-catalog.ts';
import { costOf } from './prices.ts';
import type { ChatRequest, Completion, ProviderClient, StreamEvent, TokenUsage } from './providers/index.ts';
import type { Budget, SpendAdmission } from './spending/admission.ts';
import type { Hold } from './spending/privileged/spend-counters.ts';
import type { MinuteTicket } from './limits/minute-windows.ts';
import { withRetries, type Attempt, type RetryPolicy } from './providers/retries.ts';
import type { UsageWriter } from './privileged/usage-writer.ts';
import type { Log } from '@agentyard/http';

/** Who a call is billed to: `demo`, a user, or a backend caller's `x-user-id`; and the agent, if any. */
export interface Caller {
  userRef: string;
  userId: string | null;
  agentId: string | null;
  /** The budget the call draws on (reserved at admission, settled with its cost); none: not budgeted (admins, demo, anonymous). */
  budget?: Budget;
  /** The call as admitted under the caller's per-minute limits: the answer's tokens count there once served. */
  minuteTicket?: MinuteTicket;
  /** The caller's own key for the provider of the model asked for (BYOK): used instead of the platform's, charged nothing, no fallback. */
  ownKey?: { provider: ProviderName; apiKey: string };
  /** The channel whose inbound message started the agent's turn (turn-origin.ts): its usage row names it. */
  channel?: string | null;
}

const CHARS_PER_TOKEN = 4;
export const estimateTokens = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

function inputText(request: ChatRequest): string {
  const messages = request.openAiBody
    ? JSON.stringify(request.openAiBody.messages ?? '')
    : request.messages.map((m) => m.content).join('\n');
  return messages;
}

function turnsOf(request: ChatRequest): number {
  const messages = (request.openAiBody?.messages as { role?: unknown }[] | undefined) ?? request.messages;
  return messages.filter((m) => m.role === 'user').length;
}

/** The gateway's own time up to its first provider call (admission, budget); each later candidate is a fallback. */
function providerCalled(candidates: CatalogEntry[], candidate: CatalogEntry, started: number): void {
  if (candidate === candidates[0])
    metrics.aiGatewayOverhead().observe({ provider: candidate.provider }, (performance.now() - started) / 1000);
  else metrics.aiFallbacks().inc({ from: candidates[0]!.provider, to: candidate.provider });
}

/** No retries: each candidate is tried once (the policy is the config's PROVIDER_RETRY_* in the service). */
const NO_RETRIES: RetryPolicy = { retries: 0, baseMs: 0, deadlineMs: 0 };

/**
 * Sends a chat to a model, again while it answers 429 or 5xx (backoff with jitter, within the
 * retry deadline), then to its provider's fallback model. Every call served is
 * recorded as usage with its tokens and cost, every call the providers failed as a failed call
 * with none, and every provider attempt in the row's detail.
 */
export class ChatGateway {
  private readonly clients: Map<ProviderName, ProviderClient>;
  private readonly writer: UsageWriter;
  private readonly log: Pick<Log, 'warn' | 'error'>;
  private readonly spending: SpendAdmission | null;
  readonly retry: RetryPolicy;
  private readonly withKey: ((provider: ProviderName, apiKey: string) => ProviderClient) | null;

  constructor(
    clients: Map<ProviderName, ProviderClient>,
    writer: UsageWriter,
    log: Pick<Log, 'warn' | 'error'>,
    spending: SpendAdmission | null = null,
    retry: RetryPolicy = NO_RETRIES,
    withKey: ((provider: ProviderName, apiKey: string) => ProviderClient) | null = null,
  ) {
    this.clients = clients;
    this.writer = writer;
    this.log = log;
    this.spending = spending;
    this.retry = retry;
    this.withKey = withKey;
  }

  /** The client a call of `model` goes through: the caller's own key's for its provider, else the platform's. */
  private clientOf(model: CatalogEntry, caller: Caller): ProviderClient {
    if (caller.ownKey?.provider === model.provider && this.withKey)
      return this.withKey(model.provider, caller.ownKey.apiKey);
    return this.clients.get(model.provider)!;
  }

  /** Calls a provider under the retry policy, from a call admitted at `admitted` (Date.now()). */
  attempt<T>(model: CatalogEntry, admitted: number, attempts: Attempt[], call: () => Promise<T>): Promise<T> {
    return withRetries(this.retry, admitted + this.retry.deadlineMs, model, attempts, call);
  }

  /** Reserves a budgeted call's most expensive outcome before any provider sees it (402 when it does not fit); each candidate is sent the call as reserved. */
  private async admit(
    candidates: CatalogEntry[],
    request: ChatRequest,
    caller: Caller,
  ): Promise<{ requestFor: (model: CatalogEntry) => ChatRequest; hold: Hold | null }> {
    if (!this.spending || !caller.budget || candidates.length === 0) return { requestFor: () => request, hold: null };
    try {
      return await this.spending.admit(caller.budget, candidates, request);
    } catch (error) {
      if (error instanceof HttpError && error.statusCode < 500)
        metrics.aiBudgetRefusals().inc({ reason: error.code ?? String(error.statusCode) });
      throw error;
    }
  }

  isUsable = (model: CatalogEntry): boolean => this.clients.has(model.provider);

  /** The plan's monthly AI allowance in USD (0 when spend is not enforced). */
  allowanceOf(plan: Budget['plan']): number {
    return this.spending?.allowanceOf(plan) ?? 0;
  }

  private attempts(model: CatalogEntry, allowed: CatalogEntry[], caller: Caller): CatalogEntry[] {
    // A call on the caller's own key stays on it: a fallback would go to the platform's account.
    if (caller.ownKey?.provider === model.provider) return [model];
    const fallback = fallbackFor(model, allowed);
    return [model, ...(fallback ? [fallback] : [])].filter(this.isUsable);
  }

  /** A request the caller got wrong (a tool turn that cannot be translated) is refused as such, not retried elsewhere. */
  private failed(model: CatalogEntry, error: unknown, caller: Caller) {
    if (error instanceof HttpError && error.statusCode < 500) throw error;
    if (caller.ownKey?.provider === model.provider) ownKeyRefused(model, error);
    this.log.warn(
      {
        provider: model.provider,
        model: model.id,
        status: (error as UpstreamError).status,
        reason: (error as Error).message,
      },
      'provider call failed',
    );
    metrics.aiProviderErrors().inc({ provider: model.provider });
  }

  async complete(
    model: CatalogEntry,
    allowed: CatalogEntry[],
    original: ChatRequest,
    caller: Caller,
  ): Promise<{ model: CatalogEntry; completion: Completion }> {
    const started = performance.now();
    const candidates = this.attempts(model, allowed, caller);
    const { requestFor, hold } = await this.admit(candidates, original, caller);
    const admitted = Date.now();
    const attempts: Attempt[] = [];
    let served = false;
    let failure: unknown;
    try {
      for (const candidate of candidates) {
        providerCalled(candidates, candidate, started);
        const request = requestFor(candidate);
        try {
          const completion = await this.attempt(candidate, admitted, attempts, () =>
            this.clientOf(candidate, caller).complete(candidate.upstream, request),
          );
          served = true;
          this.record(
            candidate,
            caller,
            request,
            completion.usage,
            completion.content,
            completion.toolCalls.map((call) => call.name),
            hold,
            attempts,
          );
          return { model: candidate, completion };
        } catch (error) {
          failure = error;
          this.failed(candidate, error, caller);
        }
      }
    } finally {
      if (!served) this.unserved(model, caller, hold, attempts, failure);
    }
    throw AiErrors.chatFailed();
  }

  /** Opens a stream (falling back while the provider has not started answering); usage is recorded when it ends, however it ends. */
  async stream(
    model: CatalogEntry,
    allowed: CatalogEntry[],
    original: ChatRequest,
    caller: Caller,
  ): Promise<{ model: CatalogEntry; events: AsyncIterable<StreamEvent> }> {
    const started = performance.now();
    const candidates = this.attempts(model, allowed, caller);
    const { requestFor, hold } = await this.admit(candidates, original, caller);
    const admitted = Date.now();
    const attempts: Attempt[] = [];
    let served = false;
    let failure: unknown;
    try {
      for (const candidate of candidates) {
        providerCalled(candidates, candidate, started);
        const request = requestFor(candidate);
        try {
          const events = await this.attempt(candidate, admitted, attempts, () =>
            this.clientOf(candidate, caller).openStream(candidate.upstream, request),
          );
          served = true;
          return { model: candidate, events: this.tracked(candidate, caller, request, events, hold, attempts) };
        } catch (error) {
          failure = error;
          this.failed(candidate, error, caller);
        }
      }
    } finally {
      // A stream that opened is recorded and settled at its own end, however it ends.
      if (!served) this.unserved(model, caller, hold, attempts, failure);
    }
    throw AiErrors.chatFailed();
  }

  private async *tracked(
    model: CatalogEntry,
    caller: Caller,
    request: ChatRequest,
    events: AsyncIterable<StreamEvent>,
    hold: Hold | null,
    attempts: Attempt[],
  ): AsyncGenerator<StreamEvent> {
    let text = '';
    let usage: TokenUsage | null = null;
    const tools: string[] = [];
    const named = new Set<number>();
    try {
      for await (const event of events) {
        if (event.type === 'delta') {
          text += event.text;
          // A call's name counts once, however many of its pieces repeat it.
          for (const call of event.toolCalls ?? [])
            if (call.name && !named.has(call.index)) {
              named.add(call.index);
              tools.push(call.name);
            }
        } else if (event.type === 'usage') usage = event.usage;
        yield event;
      }
    } catch (error) {
      this.failed(model, error, caller);
      throw error;
    } finally {
      this.record(model, caller, request, usage, text, tools, hold, attempts);
    }
  }

  /** `tools`: the name of each tool the model called in its answer. */
  private record(
    model: CatalogEntry,
    caller: Caller,
    request: ChatRequest,
    usage: TokenUsage | null,
    output: string,
    tools: string[],
    hold: Hold | null,
    attempts: Attempt[],
  ): void {
    if (!usage)
      this.log.warn(
        { provider: model.provider, model: model.id },
        'provider reported no token usage: recorded an estimate',
      );
    const tokens = usage ?? { input: estimateTokens(inputText(request)), output: estimateTokens(output) };
    this.recordServed(model, caller, tokens, turnsOf(request), tools, hold, attempts);
  }

  /** Reserves `amountUsd` on a budgeted caller's budget before a call of another wire is sent (null: not budgeted). */
  async reserve(caller: Caller, amountUsd: number): Promise<Hold | null> {
    if (!this.spending || !caller.budget) return null;
    try {
      return await this.spending.reserve(caller.budget, amountUsd);
    } catch (error) {
      if (error instanceof HttpError && error.statusCode < 500)
        metrics.aiBudgetRefusals().inc({ reason: error.code ?? String(error.statusCode) });
      throw error;
    }
  }

  /** Gives back a reservation whose call was never served (a no-op once settled). */
  release(hold: Hold | null): void {
    if (hold) this.spending!.settle(hold, 0);
  }

  /**
   * Ends a call of any wire that no provider attempt served: its reservation goes back and, when
   * the providers failed it (every retry and fallback), it is recorded as a failed call of `model`
   * (the model asked for), no tokens and no cost, with its attempts. A refusal of ours (an
   * `HttpError`: a tool turn that cannot be translated, a body that cannot be priced) is the
   * caller's mistake and no call at all, as is a call refused before any attempt.
   */
  unserved(model: CatalogEntry, caller: Caller, hold: Hold | null, attempts: Attempt[], error: unknown): void {
    this.release(hold);
    if (attempts.length === 0 || error instanceof HttpError) return;
    const ownKey = caller.ownKey?.provider === model.provider;
    const { budget: _, minuteTicket: _ticket, ownKey: _key, ...billedTo } = caller;
    this.writer.record({
      ...billedTo,
      model: model.id,
      provider: model.provider,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      turns: 0,
      tools: [],
      outcome: 'failed',
      detail: { attempts, ...(ownKey ? { ownKey: true } : {}) },
      at: new Date(),
    });
  }

  /**
   * Records a flat fee (a gateway plugin's price) as a usage row of its own, `gateway/<what>` served
   * by `agentyard`: it settles its reservation and counts against the month's allowance like any AI
   * spend, so the usage writer takes the part beyond the allowance from the credits ledger.
   */
  recordFee(caller: Caller, what: string, costUsd: number, hold: Hold | null): void {
    if (hold) this.spending!.settle(hold, costUsd);
    const { budget, minuteTicket: _, ownKey: _key, ...billedTo } = caller;
    this.writer.record({
      ...billedTo,
      includedUsd: budget && this.spending ? this.spending.allowanceOf(budget.plan) : null,
      model: `gateway/${what}`,
      provider: 'agentyard',
      inputTokens: 0,
      outputTokens: 0,
      costUsd,
      turns: 0,
      tools: [],
      at: new Date(),
    });
  }

  /** Records a served call of any wire: its cost (cache reads and writes at their rates) settles its reservation and lands in usage. */
  recordServed(
    model: CatalogEntry,
    caller: Caller,
    tokens: TokenUsage,
    turns: number,
    tools: string[],
    hold: Hold | null = null,
    attempts: Attempt[] = [],
  ): void {
    // The caller's own key: the provider bills them, the platform charges nothing (no plan sets a fee).
    const ownKey = caller.ownKey?.provider === model.provider;
    const cost = ownKey
      ? 0
      : costOf(model, tokens.input, tokens.output, {
          read: tokens.cacheRead,
          write: tokens.cacheWrite,
          write1h: tokens.cacheWrite1h,
        });
    if (cost === null)
      this.log.error(
        { model: model.id, provider: model.provider },
        'NO PRICE KNOWN for model: usage recorded without a cost',
      );
    if (hold) this.spending!.settle(hold, cost);
    metrics.aiTokens().inc({ provider: model.provider, model: model.id, kind: 'input' }, tokens.input);
    metrics.aiTokens().inc({ provider: model.provider, model: model.id, kind: 'output' }, tokens.output);
    if (cost !== null) metrics.aiCost().inc({ provider: model.provider, model: model.id }, cost);
    caller.minuteTicket?.settle(tokens.input + tokens.output);
    const { budget, minuteTicket: _, ownKey: _key, ...billedTo } = caller;
    this.writer.record({
      ...billedTo,
      includedUsd: budget && this.spending ? this.spending.allowanceOf(budget.plan) : null,
      model: model.id,
      provider: model.provider,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      cacheReadTokens: tokens.cacheRead ?? 0,
      cacheWriteTokens: tokens.cacheWrite ?? 0,
      costUsd: cost,
      turns,
      tools,
      ...(attempts.length > 0 || ownKey ? { detail: { attempts, ...(ownKey ? { ownKey: true } : {}) } } : {}),
      at: new Date(),
    });
  }
}

/**
 * A call on the caller's own key that its provider refused for the caller's part (a revoked or
 * invalid key, no credit, a model the key may not use) is told as the provider said it; its 429 and
 * 5xx, past the retries, are the provider's trouble (500).
 */
export function ownKeyRefused(model: CatalogEntry, error: unknown): void {
  if (
    !(error instanceof UpstreamError) ||
    error.status === undefined ||
    error.status < 400 ||
    error.status >= 500 ||
    error.status === 429
  )
    return;
  throw AiErrors.ownKeyRefused(
    model.provider,
    error.status,
    error instanceof ProviderRefusal ? error.providerMessage : undefined,
  );
}
