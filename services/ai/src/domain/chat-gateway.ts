import { HttpError, type UpstreamError } from '@agentyard/http';
import { metrics } from '@agentyard/observability';
import { AiErrors } from '../errors.ts';
import { fallbackFor, type CatalogEntry, type ProviderName } from './model-catalog.ts';
import { costOf } from './prices.ts';
import type { ChatRequest, Completion, ProviderClient, StreamEvent, TokenUsage } from './providers/index.ts';
import type { Budget, SpendAdmission } from './spending/admission.ts';
import type { Hold } from './spending/spend-counters-system.ts';
import type { UsageWriter } from './usage-writer-system.ts';
import type { Log } from '@agentyard/http';

/** Who a call is billed to: `demo`, a user, or a backend caller's `x-user-id`; and the agent, if any. */
export interface Caller {
  userRef: string;
  userId: string | null;
  agentId: string | null;
  /** The budget the call draws on (reserved at admission, settled with its cost); none: not budgeted (admins, demo, anonymous). */
  budget?: Budget;
}

const CHARS_PER_TOKEN = 4;
export const estimateTokens = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

function inputText(request: ChatRequest): string {
  const messages = request.openAiBody ? JSON.stringify(request.openAiBody.messages ?? '') : request.messages.map((m) => m.content).join('\n');
  return messages;
}

function turnsOf(request: ChatRequest): number {
  const messages = (request.openAiBody?.messages as { role?: unknown }[] | undefined) ?? request.messages;
  return messages.filter((m) => m.role === 'user').length;
}

/** The gateway's own time up to its first provider call (admission, budget); each later candidate is a fallback. */
function providerCalled(candidates: CatalogEntry[], candidate: CatalogEntry, started: number): void {
  if (candidate === candidates[0]) metrics.aiGatewayOverhead().observe({ provider: candidate.provider }, (performance.now() - started) / 1000);
  else metrics.aiFallbacks().inc({ from: candidates[0]!.provider, to: candidate.provider });
}

/**
 * Sends a chat to a model and, on a provider error, once more to its provider's fallback model
 * (spec §4.4). Every call served is recorded as usage with its tokens and cost.
 */
export class ChatGateway {
  private readonly clients: Map<ProviderName, ProviderClient>;
  private readonly writer: UsageWriter;
  private readonly log: Pick<Log, 'warn' | 'error'>;
  private readonly spending: SpendAdmission | null;

  constructor(clients: Map<ProviderName, ProviderClient>, writer: UsageWriter, log: Pick<Log, 'warn' | 'error'>, spending: SpendAdmission | null = null) {
    this.clients = clients;
    this.writer = writer;
    this.log = log;
    this.spending = spending;
  }

  /** Reserves a budgeted call's most expensive outcome before any provider sees it (402 when nothing is left). */
  private async admit(candidates: CatalogEntry[], request: ChatRequest, caller: Caller): Promise<{ request: ChatRequest; hold: Hold | null }> {
    if (!this.spending || !caller.budget || candidates.length === 0) return { request, hold: null };
    try {
      return await this.spending.admit(caller.budget, candidates, request);
    } catch (error) {
      if (error instanceof HttpError && error.statusCode < 500) metrics.aiBudgetRefusals().inc({ reason: error.code ?? String(error.statusCode) });
      throw error;
    }
  }

  isUsable = (model: CatalogEntry): boolean => this.clients.has(model.provider);

  private attempts(model: CatalogEntry, allowed: CatalogEntry[]): CatalogEntry[] {
    const fallback = fallbackFor(model, allowed);
    return [model, ...(fallback ? [fallback] : [])].filter(this.isUsable);
  }

  /** A request the caller got wrong (a tool turn that cannot be translated) is refused as such, not retried elsewhere. */
  private failed(model: CatalogEntry, error: unknown) {
    if (error instanceof HttpError && error.statusCode < 500) throw error;
    this.log.warn({ provider: model.provider, model: model.id, status: (error as UpstreamError).status, reason: (error as Error).message }, 'provider call failed');
    metrics.aiProviderErrors().inc({ provider: model.provider });
  }

  async complete(model: CatalogEntry, allowed: CatalogEntry[], original: ChatRequest, caller: Caller): Promise<{ model: CatalogEntry; completion: Completion }> {
    const started = performance.now();
    const candidates = this.attempts(model, allowed);
    const { request, hold } = await this.admit(candidates, original, caller);
    try {
      for (const candidate of candidates) {
        providerCalled(candidates, candidate, started);
        try {
          const completion = await this.clients.get(candidate.provider)!.complete(candidate.upstream, request);
          this.record(
            candidate,
            caller,
            request,
            completion.usage,
            completion.content,
            completion.toolCalls.map((call) => call.name),
            hold,
          );
          return { model: candidate, completion };
        } catch (error) {
          this.failed(candidate, error);
        }
      }
    } finally {
      if (hold) this.spending!.settle(hold, 0); // nothing served: the reservation goes back (a no-op once settled)
    }
    throw AiErrors.chatFailed();
  }

  /** Opens a stream (falling back while the provider has not started answering); usage is recorded when it ends, however it ends. */
  async stream(model: CatalogEntry, allowed: CatalogEntry[], original: ChatRequest, caller: Caller): Promise<{ model: CatalogEntry; events: AsyncIterable<StreamEvent> }> {
    const started = performance.now();
    const candidates = this.attempts(model, allowed);
    const { request, hold } = await this.admit(candidates, original, caller);
    let served = false;
    try {
      for (const candidate of candidates) {
        providerCalled(candidates, candidate, started);
        try {
          const events = await this.clients.get(candidate.provider)!.openStream(candidate.upstream, request);
          served = true;
          return { model: candidate, events: this.tracked(candidate, caller, request, events, hold) };
        } catch (error) {
          this.failed(candidate, error);
        }
      }
    } finally {
      if (hold && !served) this.spending!.settle(hold, 0); // the stream's own end settles a served call
    }
    throw AiErrors.chatFailed();
  }

  private async *tracked(model: CatalogEntry, caller: Caller, request: ChatRequest, events: AsyncIterable<StreamEvent>, hold: Hold | null): AsyncGenerator<StreamEvent> {
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
      this.failed(model, error);
      throw error;
    } finally {
      this.record(model, caller, request, usage, text, tools, hold);
    }
  }

  /** `tools`: the name of each tool the model called in its answer. */
  private record(model: CatalogEntry, caller: Caller, request: ChatRequest, usage: TokenUsage | null, output: string, tools: string[], hold: Hold | null = null): void {
    if (!usage) this.log.warn({ provider: model.provider, model: model.id }, 'provider reported no token usage: recorded an estimate');
    const tokens = usage ?? { input: estimateTokens(inputText(request)), output: estimateTokens(output) };
    const cost = costOf(model, tokens.input, tokens.output);
    if (cost === null) this.log.error({ model: model.id, provider: model.provider }, 'NO PRICE KNOWN for model: usage recorded without a cost');
    if (hold) this.spending!.settle(hold, cost);
    metrics.aiTokens().inc({ provider: model.provider, model: model.id, kind: 'input' }, tokens.input);
    metrics.aiTokens().inc({ provider: model.provider, model: model.id, kind: 'output' }, tokens.output);
    if (cost !== null) metrics.aiCost().inc({ provider: model.provider, model: model.id }, cost);
    const { budget, ...billedTo } = caller;
    this.writer.record({
      ...billedTo,
      includedUsd: budget && this.spending ? this.spending.allowanceOf(budget.plan) : null,
      model: model.id,
      provider: model.provider,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      costUsd: cost,
      turns: turnsOf(request),
      tools,
      at: new Date(),
    });
  }
}
