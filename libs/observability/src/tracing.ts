// Loaded with `node --import` before a process's own modules (so pg, ioredis, undici, http and
// Fastify are instrumented as they load), and only when OTEL_EXPORTER_OTLP_ENDPOINT is set: without
// it nothing here runs and tracing costs nothing. Spans go out over OTLP/HTTP; W3C trace context
// (traceparent) is the propagator, so a trace crosses the edge hop in the request's headers.
import { basename, dirname } from 'node:path';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';

/** `services/agents/src/worker.ts` → `agents-worker`, `services/edge/src/main.ts` → `edge`. */
function processName(entry = process.argv[1] ?? 'agentyard'): string {
  const service = basename(dirname(dirname(entry)));
  return basename(entry) === 'worker.ts' ? `${service}-worker` : service;
}

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // Traces only: metrics are Prometheus's (the operations listener), logs are pino's.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? `agentyard-${processName()}`,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      // Probes and scrapes are not traced: the operations listener is plain node:http.
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => /^\/(livez|readyz|metrics)\b/.test(request.url ?? ''),
      }),
      new UndiciInstrumentation(),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  // Spans still buffered are sent before the process exits (close-with-grace ends with exit).
  process.once('beforeExit', () => void sdk.shutdown());
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => void sdk.shutdown().catch(() => undefined));
}
