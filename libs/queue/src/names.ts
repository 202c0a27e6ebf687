/** Every queue of the platform, named once (rule 5). */
export const QUEUES = {
  provisioning: 'provisioning',
  lifecycle: 'agent-lifecycle',
  securityEvents: 'security-events',
  scheduledPrompts: 'scheduled-prompts',
  heartbeats: 'heartbeats',
  busDelivery: 'bus-delivery',
  email: 'outbound-email',
  usage: 'usage-writes',
  agentMetrics: 'agent-metrics',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
