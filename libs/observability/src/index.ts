export {
  registerDependency,
  dependencyStates,
  pingRedis,
  DEFAULT_CHECK_TIMEOUT_MS,
  type DependencyName,
  type DependencyCheck,
  type DependencyStates,
} from './readiness.ts';
export { metrics, registry, requestMetricsOn, collectProcessMetrics, scrapedGauge, settableGauge } from './metrics.ts';
export { startOpsListener, opsAddress, OPS_PORTS, type OpsListener } from './ops-listener.ts';
export { tracingOn, activeTraceId, traceEvent, tracingArgs, TRACING_ENTRY } from './trace-context.ts';
export { requestIdNow, runForRequest, runForJob, requestLogFields } from './request-context.ts';
