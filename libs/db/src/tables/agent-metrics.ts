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
