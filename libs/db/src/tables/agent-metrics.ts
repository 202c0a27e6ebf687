import type { ColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** bigint: read as a string by the driver, written as a number. */
type BigCount = ColumnType<string | null, number | null | undefined, number | null>;

/** One sample of an agent's container by the metrics worker (raw, kept 7 days). */
export interface AgentMetricSamplesTable {
  agent_id: string;
  user_id: string;
  sampled_at: Timestamp;
  /** Whether its container ran when sampled (the uptime's numerator). */
  running: boolean;
  cpu_percent: number | null;
  memory_bytes: BigCount;
  network_rx_bytes: BigCount;
  network_tx_bytes: BigCount;
}

/** Hourly averages of the samples (network: the hour's last counters), kept 90 days. */
export interface AgentMetricHoursTable {
  agent_id: string;
  user_id: string;
  hour: Timestamp;
  samples: number;
  running_samples: number;
  cpu_percent: number | null;
  memory_bytes: BigCount;
  network_rx_bytes: BigCount;
  network_tx_bytes: BigCount;
}

export type AgentEventKind = 'exit' | 'oom' | 'health' | 'restarted' | 'crash-loop' | 'recycled';

/** What happened to an agent's container (from the engine) and what the watchdog did about it. */
export interface AgentEventsTable {
  id: ColumnType<string, string | undefined, never>;
  agent_id: string;
  user_id: string;
  at: ColumnType<Date, Date | string | undefined, never>;
  kind: AgentEventKind;
  /** An exit the platform asked for (a stop, a rebuild): nothing to restart. */
  expected: ColumnType<boolean, boolean | undefined, boolean>;
  exit_code: number | null;
  oom_killed: ColumnType<boolean, boolean | undefined, boolean>;
  detail: string | null;
  /** The container's last output lines when it exited, secrets redacted. */
  log_tail: ColumnType<string[], string[] | undefined, string[]>;
  /** The container run the event is about: one record per run across workers. */
  engine_key: string | null;
}
