import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';

/** The one registry of this process, rendered by the operations listener's `/metrics`. */
export const registry = register;

/**
 * `METRICS=off` leaves out the per-request series (request durations, the edge's added time): for
 * benchmarks that measure what they cost. Process, queue and domain metrics stay.
 */
export const requestMetricsOn = process.env.METRICS !== 'off';

let defaultsOn = false;
/** Process metrics (CPU, heap, event-loop lag, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry });
}

/**
 * A metric made on first use: a process exports only the series of what it does (a scheduler has
 * no provisioning histogram), and a module imported twice in one process registers it once.
 */
function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LONG_SECONDS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const metrics = {
  /** Every HTTP answer of every Fastify app, by route pattern (never the raw URL). */
  httpRequestDuration: lazy(
    () =>
      new Histogram({
        name: 'http_request_duration_seconds',
        help: 'HTTP request duration by route pattern',
        labelNames: ['service', 'method', 'route', 'status_code'],
        buckets: SECONDS,
      }),
  ),
  /** The edge's own share of a forwarded request: its whole time less the service's. */
  edgeAddedDuration: lazy(
    () =>
      new Histogram({
        name: 'edge_added_duration_seconds',
        help: 'Time the edge adds to a forwarded request (total less upstream)',
        labelNames: ['surface'],
        buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      }),
  ),
  /** Callers the edge resolved in the database rather than from memory (every one while the change notices are lost). */
  edgeIdentityLookups: lazy(
    () =>
      new Counter({
        name: 'edge_identity_database_lookups_total',
        help: 'Session and API-key lookups the edge made in the database (the others were answered from memory)',
        labelNames: ['kind'],
      }),
  ),
  rateLimitRefusals: lazy(
    () =>
      new Counter({
        name: 'rate_limit_refusals_total',
        help: 'Requests refused by a rate limit, by scope',
        labelNames: ['scope'],
      }),
  ),
  jobDuration: lazy(
    () =>
      new Histogram({
        name: 'bullmq_job_duration_seconds',
        help: 'BullMQ job processing time by queue and outcome',
        labelNames: ['queue', 'outcome'],
        buckets: LONG_SECONDS,
      }),
  ),
  aiGatewayOverhead: lazy(
    () =>
      new Histogram({
        name: 'ai_gateway_overhead_seconds',
        help: 'AI gateway time before the provider is called (admission, budget, routing)',
        labelNames: ['provider'],
        buckets: SECONDS,
      }),
  ),
  aiTokens: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_tokens_total',
        help: 'Tokens used through the AI gateway',
        labelNames: ['provider', 'model', 'kind'],
      }),
  ),
  aiCost: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_cost_usd_total',
        help: 'Cost charged through the AI gateway in USD',
        labelNames: ['provider', 'model'],
      }),
  ),
  aiProviderErrors: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_provider_errors_total',
        help: 'Provider calls that failed',
        labelNames: ['provider'],
      }),
  ),
  aiFallbacks: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_fallbacks_total',
        help: 'Requests moved to a fallback provider',
        labelNames: ['from', 'to'],
      }),
  ),
  aiProviderRetries: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_provider_retries_total',
        help: 'Provider calls tried again after a 429 or 5xx answer',
        labelNames: ['provider'],
      }),
  ),
  aiMinuteLimitRefusals: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_minute_limit_refusals_total',
        help: "AI calls refused 429 by an agent's or a user API key's own requests or tokens per minute",
        labelNames: ['limit'],
      }),
  ),
  aiBudgetRefusals: lazy(
    () =>
      new Counter({
        name: 'ai_gateway_budget_refusals_total',
        help: 'AI requests refused for budget or quota',
        labelNames: ['reason'],
      }),
  ),
  provisioningPhase: lazy(
    () =>
      new Histogram({
        name: 'provisioning_phase_duration_seconds',
        help: 'Agent provisioning phase durations',
        labelNames: ['phase'],
        buckets: LONG_SECONDS,
      }),
  ),
  schedulerFiringLag: lazy(
    () =>
      new Histogram({
        name: 'scheduler_firing_lag_seconds',
        help: "Delay between a firing's due time and its job starting (first attempt)",
        labelNames: ['kind'],
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      }),
  ),
};

type Reader = () => Promise<Array<[Record<string, string>, number]>>;
const readers = new Map<string, Reader>();

/**
 * A gauge whose values are read when Prometheus scrapes (queue counts, agents by status): `read`
 * returns the labelled values; a failure leaves the last values and is not thrown into the scrape.
 * A later registration of the same name replaces the reader (the resource it read was replaced).
 */
export function scrapedGauge<L extends string>(
  name: string,
  help: string,
  labelNames: L[],
  read: () => Promise<Array<[Partial<Record<L, string>>, number]>>,
): void {
  readers.set(name, read as Reader);
  if (registry.getSingleMetric(name)) return;
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      try {
        const values = await readers.get(name)!();
        this.reset();
        for (const [labels, value] of values) this.set(labels as Partial<Record<L, string>>, value);
      } catch {
        // keep the last values: a scrape must answer even when a dependency is down
      }
    },
  });
}

/** A gauge set by the code that knows the value (the usage writer's buffer depth). */
export function settableGauge(name: string, help: string): Gauge {
  return (registry.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help, registers: [registry] });
}
