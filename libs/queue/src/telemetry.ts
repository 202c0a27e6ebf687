import { BullMQOtel } from 'bullmq-otel';
import { tracingOn } from '@agentyard/observability';

let telemetry: BullMQOtel | undefined;
/**
 * BullMQ's OpenTelemetry add-on when tracing is on: a job carries the trace context of the request
 * that queued it, and its processing is a span of that trace in the worker. Nothing when off.
 */
export function queueTelemetry(): { telemetry?: BullMQOtel } {
  if (!tracingOn) return {};
  return { telemetry: (telemetry ??= new BullMQOtel({ tracerName: 'agentyard' })) };
}
