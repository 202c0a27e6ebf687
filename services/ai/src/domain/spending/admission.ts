import type { Plan } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';
import type { CatalogEntry } from '../model-catalog.ts';
import { costOf } from '../prices.ts';
import type { ChatRequest } from '../providers/index.ts';
import type { Hold, SpendCounters } from './spend-counters-system.ts';

/** Whose budget a call draws on: a known user on a plan, through one of their agents or not. */
export interface Budget {
  userId: string;
  agentId: string | null;
  plan: Plan;
}

const CHARS_PER_TOKEN = 4;

/** What the prompt can cost at most: its text (messages and tool declarations) at about 4 characters a token. */
function promptTokens(request: ChatRequest): number {
  const body = request.openAiBody;
  const text = body ? JSON.stringify(body.messages ?? '') + JSON.stringify(body.tools ?? '') : request.messages.map((m) => m.content).join('\n');
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

const outputCap = (request: ChatRequest): number | undefined => {
  const body = request.openAiBody;
  const fromBody = body && (typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : undefined);
  return request.max_tokens ?? fromBody;
};

/**
 * Admission for calls that draw on a budget: the call is bounded to `defaultMaxTokens` of output
 * when it named no limit, and its most expensive outcome (the prompt and every output token, on
 * the dearest model it may be served by) is reserved before any provider sees it.
 */
export class SpendAdmission {
  private readonly counters: SpendCounters;
  private readonly defaultMaxTokens: number;

  constructor(counters: SpendCounters, defaultMaxTokens: number) {
    this.counters = counters;
    this.defaultMaxTokens = defaultMaxTokens;
  }

  async admit(budget: Budget, candidates: CatalogEntry[], request: ChatRequest): Promise<{ request: ChatRequest; hold: Hold }> {
    const maxTokens = outputCap(request) ?? this.defaultMaxTokens;
    const bounded: ChatRequest = { ...request, max_tokens: maxTokens };
    if (request.openAiBody && outputCap({ ...request, max_tokens: undefined }) === undefined) bounded.openAiBody = { ...request.openAiBody, max_tokens: maxTokens };
    const input = promptTokens(bounded);
    const amount = Math.max(0, ...candidates.map((m) => costOf(m, input, maxTokens) ?? 0));
    let answer: Awaited<ReturnType<SpendCounters['reserve']>>;
    try {
      answer = await this.counters.reserve(budget.userId, budget.agentId, budget.plan, amount);
    } catch {
      throw AiErrors.spendUnavailable();
    }
    if (answer === 'credits') throw AiErrors.creditsExhausted();
    if (answer === 'user-limit') throw AiErrors.budgetExceeded('Monthly spending limit reached');
    if (answer === 'agent-limit') throw AiErrors.budgetExceeded("This agent's monthly spending limit is reached");
    return { request: bounded, hold: answer };
  }

  /** The plan's monthly allowance in USD (usage rows carry it, so the writer knows where credits start). */
  allowanceOf(plan: Plan): number {
    return this.counters.allowanceOf(plan);
  }

  settle(hold: Hold, costUsd: number | null): void {
    this.counters.settle(hold, costUsd ?? 0);
  }
}
