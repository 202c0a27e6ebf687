import type { SessionsTable, UsersTable } from './accounts.ts';
import type { AgentEventsTable, AgentMetricHoursTable, AgentMetricSamplesTable } from './agent-metrics.ts';
import type { AgentSnapshotsTable } from './agent-snapshots.ts';
import type { AgentChannelsTable } from './agent-channels.ts';
import type { AgentsTable, DeletedAgentsTable, SubscriptionsTable } from './agents.ts';
import type { BillingCustomersTable, LocalCheckoutsTable } from './billing.ts';
import type {
  BridgeMessagesTable,
  BridgeReadRangesTable,
  BusEndpointsTable,
  BusMessagesTable,
  UndergroundEventsTable,
  UndergroundSplitRecipientsTable,
  UndergroundSplitsTable,
  UndergroundWalletsTable,
  WebhookEventsTable,
} from './bridge.ts';
import type { TraderJobsTable, TraderThreadsTable, UserTraderKeysTable } from './trader.ts';
import type { StripeEventsTable, UsageDailyTable, UsageEventsTable, UsageToolsDailyTable } from './ai.ts';
import type {
  ApiKeysTable,
  AuthNoncesTable,
  EmailEventsTable,
  EmailVerificationsTable,
  EmailSuppressionsTable,
  InvitesTable,
  OauthStatesTable,
  PasswordResetRequestsTable,
  PasswordResetsTable,
  ProviderAccountsTable,
  RiscEventsTable,
} from './identity.ts';
import type {
  AgentMinuteLimitsTable,
  ApiKeyMinuteLimitsTable,
  AgentSpendingLimitsTable,
  CreditEntriesTable,
  ProviderKeysTable,
  SpendingLimitsTable,
} from './spending.ts';
import type {
  InstallationsTable,
  SwarmMembersTable,
  SwarmRunMembersTable,
  SwarmRunsTable,
  SwarmsTable,
} from './fleet.ts';
import type {
  AgentConfigBackupsTable,
  AgentConfigsTable,
  ConfigBackupsTable,
  DevicesTable,
  HeartbeatsTable,
  HeartbeatRunsTable,
  ScheduledTaskRunsTable,
  ScheduledTasksTable,
  WorkflowNodesTable,
  WorkflowsTable,
} from './workspace.ts';
export type { SessionsTable, UsersTable } from './accounts.ts';
export type {
  AgentHibernation,
  AgentsTable,
  AgentStatus,
  DeletedAgentsTable,
  SubscriptionsTable,
  ToolsProfile,
  VerificationType,
} from './agents.ts';
export type * from './bridge.ts';
export type { TraderJobsTable, TraderThreadsTable, UserTraderKeysTable } from './trader.ts';
export type { StripeEventsTable, UsageDailyTable, UsageEventsTable, UsageToolsDailyTable } from './ai.ts';
export type * from './identity.ts';
export type * from './workspace.ts';
export type { BillingCustomersTable, LocalCheckoutsTable } from './billing.ts';
export type * from './spending.ts';
export type { AgentMetricHoursTable, AgentMetricSamplesTable } from './agent-metrics.ts';
export type { AgentSnapshotsTable, SnapshotReason, SnapshotStatus } from './agent-snapshots.ts';
export type { AgentChannelsTable } from './agent-channels.ts';
export type { AgentEventKind, AgentEventsTable } from './agent-metrics.ts';
export type * from './fleet.ts';

/** Every table, by name. Each area adds its tables in a file of its own and names them here. */
export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  agents: AgentsTable;
  deleted_agents: DeletedAgentsTable;
  agent_metric_samples: AgentMetricSamplesTable;
  agent_metric_hours: AgentMetricHoursTable;
  agent_snapshots: AgentSnapshotsTable;
  agent_channels: AgentChannelsTable;
  agent_events: AgentEventsTable;
  agent_config_backups: AgentConfigBackupsTable;
  subscriptions: SubscriptionsTable;
  billing_customers: BillingCustomersTable;
  local_checkouts: LocalCheckoutsTable;
  bridge_messages: BridgeMessagesTable;
  bridge_read_ranges: BridgeReadRangesTable;
  underground_wallets: UndergroundWalletsTable;
  underground_events: UndergroundEventsTable;
  underground_splits: UndergroundSplitsTable;
  underground_split_recipients: UndergroundSplitRecipientsTable;
  bus_endpoints: BusEndpointsTable;
  bus_messages: BusMessagesTable;
  webhook_events: WebhookEventsTable;
  user_trader_keys: UserTraderKeysTable;
  trader_jobs: TraderJobsTable;
  trader_threads: TraderThreadsTable;
  usage_events: UsageEventsTable;
  usage_daily: UsageDailyTable;
  usage_tools_daily: UsageToolsDailyTable;
  stripe_events: StripeEventsTable;
  provider_accounts: ProviderAccountsTable;
  api_keys: ApiKeysTable;
  invites: InvitesTable;
  password_resets: PasswordResetsTable;
  email_verifications: EmailVerificationsTable;
  password_reset_requests: PasswordResetRequestsTable;
  risc_events: RiscEventsTable;
  auth_nonces: AuthNoncesTable;
  oauth_states: OauthStatesTable;
  email_events: EmailEventsTable;
  email_suppressions: EmailSuppressionsTable;
  agent_configs: AgentConfigsTable;
  config_backups: ConfigBackupsTable;
  devices: DevicesTable;
  workflows: WorkflowsTable;
  workflow_nodes: WorkflowNodesTable;
  scheduled_tasks: ScheduledTasksTable;
  scheduled_task_runs: ScheduledTaskRunsTable;
  heartbeats: HeartbeatsTable;
  heartbeat_runs: HeartbeatRunsTable;
  credit_entries: CreditEntriesTable;
  spending_limits: SpendingLimitsTable;
  agent_spending_limits: AgentSpendingLimitsTable;
  agent_minute_limits: AgentMinuteLimitsTable;
  api_key_minute_limits: ApiKeyMinuteLimitsTable;
  provider_keys: ProviderKeysTable;
  swarms: SwarmsTable;
  swarm_members: SwarmMembersTable;
  swarm_runs: SwarmRunsTable;
  swarm_run_members: SwarmRunMembersTable;
  installations: InstallationsTable;
}
