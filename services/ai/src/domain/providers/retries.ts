import { setTimeout as delay } from 'node:timers/promises';
import { UpstreamError } from '@agentyard/http';
import { metrics, traceEvent } from '@agentyard/observability';
import type { CatalogEntry } from '../model-catalog.ts';
import { ProviderRefusal } from './wire.ts';

/** How a provider call is tried again before the next candidate: on its 429 and 5xx answers, after the wait it asks for or a backoff with jitter, within a deadline. */
export interface RetryPolicy {
  /** Tries after the first, per candidate model. */
  retries: number;
  /** The first backoff's ceiling; each later one doubles it (full jitter: a random wait below it). */
  baseMs: number;
  /** No retry starts later than this after the call was admitted (the fallback is still tried once). */
  deadlineMs: number;
}

/** One provider call of a gateway call, as its usage row's detail and its trace tell it. */
export interface Attempt {
  model: string;
  provider: string;
  /** The provider's HTTP status; null: no answer (timeout, connection) or a body it could not read. */
  status: number | null;
  outcome: 'served' | 'failed';
  ms: number;
}

/** The provider said "later" (429) or failed on its side (5xx): the same call may succeed again. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof UpstreamError && error.status !== undefined && (error.status === 429 || error.status >= 500);

/**
 * Calls `model` through `call`, again after a retryable failure while retries and the deadline
 * allow, noting every attempt in `attempts` and on the trace; the last failure is thrown.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  deadline: number,
  model: CatalogEntry,
  attempts: Attempt[],
  call: () => Promise<T>,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    const started = performance.now();
    try {
      const result = await call();
      note(attempts, {
        model: model.id,
        provider: model.provider,
        status: 200,
        outcome: 'served',
        ms: Math.round(performance.now() - started),
      });
      return result;
    } catch (error) {
      const status = error instanceof UpstreamError ? (error.status ?? null) : null;
      note(attempts, {
        model: model.id,
        provider: model.provider,
        status,
        outcome: 'failed',
        ms: Math.round(performance.now() - started),
      });
      // The provider's own word on when to come back, else a backoff of ours with full jitter.
      const wait =
        (error instanceof ProviderRefusal ? error.retryAfterMs : undefined) ??
        Math.random() * policy.baseMs * 2 ** retry;
      if (!isRetryable(error) || retry >= policy.retries || Date.now() + wait >= deadline) throw error;
      metrics.aiProviderRetries().inc({ provider: model.provider });
      await delay(wait);
    }
  }
}

function note(attempts: Attempt[], attempt: Attempt): void {
  attempts.push(attempt);
  traceEvent('ai.provider.attempt', {
    'ai.model': attempt.model,
    'ai.provider': attempt.provider,
    'http.status_code': attempt.status ?? 0,
    'ai.outcome': attempt.outcome,
    'ai.ms': attempt.ms,
  });
}
