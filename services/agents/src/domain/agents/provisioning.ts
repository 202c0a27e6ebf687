import { QUEUES, UnrecoverableError, type Job, type QueueSet } from '@agentyard/queue';
import type { AgentRuntime } from './agent-runtime-system.ts';

export interface ProvisionJob {
  agentId: string;
}

/** One provisioning job per agent (its id is the dedup key); the data holds no secret. */
export async function enqueueProvisioning(queues: QueueSet, agentId: string): Promise<void> {
  await queues.get(QUEUES.provisioning).add('provision', { agentId } satisfies ProvisionJob, { jobId: `provision-${agentId}`, attempts: 3 });
}

/**
 * Moves a `pending`/`provisioning`/`deploying` agent to `running` once its gateway answers /readyz, or to
 * `error` (container removed, port freed) when the last attempt fails. Idempotent: an agent in any
 * other state, or deleted, is left alone; a container already made is reused.
 */
export async function processProvisioning(runtime: AgentRuntime, job: Job<ProvisionJob>): Promise<string> {
  const { agentId } = job.data;
  const agent = await runtime.load(agentId);
  if (!agent) return 'deleted';
  if (agent.status !== 'provisioning' && agent.status !== 'pending' && agent.status !== 'deploying') return `skipped (${agent.status})`;
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  try {
    const deployed = await runtime.deploy(agentId, agent);
    const current = await runtime.load(agentId);
    if (!current) return 'deleted';
    if (!(await runtime.waitUntilReady(current.gateway_url ?? ''))) throw new Error('the gateway did not become ready in time');
    await runtime.setStatus(agentId, 'running');
    await runtime.recordUserRuntime(agentId);
    return deployed.created ? 'running (new container)' : 'running';
  } catch (error) {
    const reason = (error as { statusCode?: number }).statusCode === 404 ? null : (error as Error).message;
    if (reason === null) throw new UnrecoverableError('agent deleted during provisioning');
    if (lastAttempt) {
      await runtime.failDeployment(agentId, `Provisioning failed: ${reason}`);
      return 'error';
    }
    throw error;
  }
}
