// The API's shapes, from the same TypeBox schemas the services validate with (never re-written here).
import type {
  AdminInviteList,
  AdminCreatedInvite,
  AgentConfigBackups,
  AgentConfigSaved,
  AgentConfigView,
  AgentStats,
  ApiKeyList,
  Billing,
  ConfigRestored,
  ConfigSaved,
  ConfigView,
  CostDashboard,
  CreatedApiKey,
  Credits,
  DashboardStats,
  Heartbeat,
  HeartbeatView,
  HeartbeatRunList,
  LifecycleResult,
  AgentActionAccepted,
  Profile,
  ProvisionResponse,
  ScheduledRun,
  ScheduledRunList,
  ScheduledRunStarted,
  ScheduledTask,
  ScheduledTaskList,
  SessionResponse,
  SessionUser,
  SpendingLimits,
  AgentMinuteLimits,
  KeyMinuteLimits,
  MinuteLimitsInput as MinuteLimitsInputSchema,
  ProviderKey,
  ProviderKeys,
  UsageByModel,
  UsageDaily,
  UsageSummary,
  UserInstance,
  WebAgent,
  WebAgentDetail,
  WebAgentList,
  AgentStatus,
  RedirectUrl,
  AgentToken,
  RenamedAgent,
  PaidPlan,
  CheckoutState,
  SignInOptions as SignInOptionsSchema,
  AgentChatReply,
  AgentChatHistory,
  AgentChatMessage,
  LogHistory,
  LogLine,
  FileListing,
  FileUploaded,
  FileDeleted,
  WorkspaceEntry,
  MemoryView,
  MemoryFile,
  MemoryWritten,
  MemoryDeleted,
  SkillList,
  SkillRemoved,
  AgentMetrics,
  MetricsPoint,
  MetricsRange,
  Device,
  DeviceLists,
  DeviceAction,
  DeviceActionResult,
  Snapshot as SnapshotSchema,
  SnapshotList,
  SnapshotTaken,
  SnapshotDeleted,
  Restored,
  Cloned,
  FleetGraph as FleetGraphSchema,
  FleetTraces as FleetTracesSchema,
  FleetCosts as FleetCostsSchema,
  SwarmList as SwarmListSchema,
  SwarmEnvelope,
  SwarmRunStarted,
  InstallationList as InstallationListSchema,
  LinkedWalletAddress,
  WalletOverview as WalletOverviewSchema,
  UsageCalls as UsageCallsSchema,
} from '@agentyard/proto-schemas';
import type { Static } from 'typebox';

export type Session = Static<typeof SessionResponse>;
export type User = Static<typeof SessionUser>;
export type ProfileView = Static<typeof Profile>;
export type Agent = Static<typeof WebAgent>;
export type AgentDetail = Static<typeof WebAgentDetail>;
export type AgentList = Static<typeof WebAgentList>;
export type Status = Static<typeof AgentStatus>;
export type Provisioned = Static<typeof ProvisionResponse>;
export type Renamed = Static<typeof RenamedAgent>;
export type Stats = Static<typeof DashboardStats>;
export type Cost = Static<typeof CostDashboard>;
export type BillingView = Static<typeof Billing>;
export type Plan = Static<typeof PaidPlan>;
export type Redirect = Static<typeof RedirectUrl>;
export type Checkout = Static<typeof CheckoutState>;
export type CreditsView = Static<typeof Credits>;
export type Limits = Static<typeof SpendingLimits>;
export type MinuteLimits = Static<typeof AgentMinuteLimits> | Static<typeof KeyMinuteLimits>;
export type MinuteLimitsInput = Static<typeof MinuteLimitsInputSchema>;
export type OwnKey = Static<typeof ProviderKey>;
export type OwnKeys = Static<typeof ProviderKeys>;
export type Keys = Static<typeof ApiKeyList>;
export type CreatedKey = Static<typeof CreatedApiKey>;
export type Tasks = Static<typeof ScheduledTaskList>;
export type Task = Static<typeof ScheduledTask>;
export type Run = Static<typeof ScheduledRun>;
export type Runs = Static<typeof ScheduledRunList>;
export type RunStarted = Static<typeof ScheduledRunStarted>;
export type HeartbeatSetting = Static<typeof Heartbeat>;
export type HeartbeatResponse = Static<typeof HeartbeatView>;
export type HeartbeatRuns = Static<typeof HeartbeatRunList>;
export type Config = Static<typeof ConfigView>;
export type ConfigSave = Static<typeof ConfigSaved>;
export type ConfigRestore = Static<typeof ConfigRestored>;
export type AgentConfig = Static<typeof AgentConfigView>;
export type AgentConfigSave = Static<typeof AgentConfigSaved>;
export type AgentBackups = Static<typeof AgentConfigBackups>;
export type ContainerStats = Static<typeof AgentStats>;
export type Instance = Static<typeof UserInstance>;
export type Lifecycle = Static<typeof LifecycleResult>;
export type ActionAccepted = Static<typeof AgentActionAccepted>;
export type Token = Static<typeof AgentToken>;
export type Invites = Static<typeof AdminInviteList>;
export type CreatedInvite = Static<typeof AdminCreatedInvite>;
export type Usage = Static<typeof UsageSummary>;
export type UsageModels = Static<typeof UsageByModel>;
export type UsageDays = Static<typeof UsageDaily>;
export type UsageCalls = Static<typeof UsageCallsSchema>;
export type SignInOptions = Static<typeof SignInOptionsSchema>;

// Working with a running agent (chat, memory, skills, devices) and its workspace (logs, files, metrics).
export type ChatReply = Static<typeof AgentChatReply>;
export type ChatHistory = Static<typeof AgentChatHistory>;
export type ChatMessage = Static<typeof AgentChatMessage>;
export type Logs = Static<typeof LogHistory>;
export type AgentLogLine = Static<typeof LogLine>;
export type Folder = Static<typeof FileListing>;
export type FolderEntry = Static<typeof WorkspaceEntry>;
export type Uploaded = Static<typeof FileUploaded>;
export type FileRemoved = Static<typeof FileDeleted>;
export type Memory = Static<typeof MemoryView>;
export type MemoryNote = Static<typeof MemoryFile>;
export type MemorySaved = Static<typeof MemoryWritten>;
export type MemoryRemoved = Static<typeof MemoryDeleted>;
export type Skills = Static<typeof SkillList>;
export type SkillGone = Static<typeof SkillRemoved>;
export type Metrics = Static<typeof AgentMetrics>;
export type MetricsSample = Static<typeof MetricsPoint>;
export type Range = Static<typeof MetricsRange>;
export type PairedDevice = Static<typeof Device>;
export type Devices = Static<typeof DeviceLists>;
export type DeviceChoice = Static<typeof DeviceAction>;
export type DevicesAfter = Static<typeof DeviceActionResult>;
export type AgentSnapshot = Static<typeof SnapshotSchema>;
export type AgentSnapshots = Static<typeof SnapshotList>;
export type SnapshotStarted = Static<typeof SnapshotTaken>;
export type SnapshotRemoved = Static<typeof SnapshotDeleted>;
export type AgentRestored = Static<typeof Restored>;
export type AgentCloned = Static<typeof Cloned>;

export type FleetGraph = Static<typeof FleetGraphSchema>;
export type FleetNode = FleetGraph['nodes'][number];
export type FleetEdge = FleetGraph['edges'][number];
export type FleetTraces = Static<typeof FleetTracesSchema>;
export type FleetCosts = Static<typeof FleetCostsSchema>;
export type SwarmList = Static<typeof SwarmListSchema>;
export type Swarm = Static<typeof SwarmEnvelope>['swarm'];
export type SwarmRun = Static<typeof SwarmRunStarted>['run'];
export type InstallationList = Static<typeof InstallationListSchema>;
export type LinkedWallet = Static<typeof LinkedWalletAddress>;
export type WalletOverview = Static<typeof WalletOverviewSchema>;
