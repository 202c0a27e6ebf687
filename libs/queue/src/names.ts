/** Every queue of the platform, named once (rule 5). */
export const QUEUES = {
  provisioning: 'provisioning',
  lifecycle: 'agent-lifecycle',
  securityEvents: 'security-events',
  scheduledPrompts: 'scheduled-prompts',
  heartbeats: 'heartbeats',
  busDelivery: 'bus-delivery',
  email: 'outbound-email',
  agentMetrics: 'agent-metrics',
  swarmRuns: 'swarm-runs',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * The lifecycle queue's job that stops a user's agents their plan no longer covers. Queued by the
 * AI service when a subscription changes (it owns billing), run by the agents worker; its data is
 * `{ userId }`, and running it again changes nothing more.
 */
export const PLAN_ENFORCEMENT_JOB = 'enforce-plan';
export interface PlanEnforcementJob {
  userId: string;
}

/**
 * The outbound-email job that tells an agent's owner it kept crashing and is no longer restarted:
 * queued by the agents worker's watchdog, sent by the auth worker (it owns mail). Its data names the
 * `agent_events` row of the crash loop (no address, no secret); sending it again sends nothing new
 * (the job id is the event's).
 */
export const AGENT_CRASH_LOOP_MAIL_JOB = 'agent-crash-loop';
export interface AgentCrashLoopMailJob {
  eventId: string;
}

/**
 * The lifecycle queue's job that wakes a hibernating agent (resumes it from a pause, starts it from
 * a stop) and is done once its gateway answers. Queued by the scheduler before it delivers a prompt
 * or heartbeat to a suspended agent, and waited for; run by the agents worker. Its data is
 * `{ agentId }`; its id names the hibernation it ends (`wakeJobId`), so concurrent wakes of one
 * agent are one job, and waking an agent that is awake changes nothing.
 */
export const WAKE_AGENT_JOB = 'wake-agent';
export interface WakeAgentJob {
  agentId: string;
}
/** One wake job per hibernation of an agent: `since` is when it was suspended (ms). */
export const wakeJobId = (agentId: string, since: number) => `wake-${agentId}-${since}`;
