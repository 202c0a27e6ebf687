import { trace } from '@opentelemetry/api';

/** Whether this process exports traces (OTEL_EXPORTER_OTLP_ENDPOINT set; the SDK loaded by --import). */
export const tracingOn = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);

/** The trace id of the active span, for log lines (undefined without one). */
export function activeTraceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  return context && context.traceId !== '00000000000000000000000000000000' ? context.traceId : undefined;
}

/** Notes an event on the active span (a provider attempt, say): a no-op without tracing or a span. */
export function traceEvent(name: string, attributes: Record<string, string | number | boolean>): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}

/** The `node --import` argument that loads tracing into a process, when tracing is on. */
export const TRACING_ENTRY = new URL('./tracing.ts', import.meta.url).pathname;
export const tracingArgs = (env: Record<string, string | undefined>): string[] =>
  env.OTEL_EXPORTER_OTLP_ENDPOINT ? ['--import', TRACING_ENTRY] : [];
