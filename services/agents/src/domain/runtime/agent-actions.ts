import { lookAgainLater, QUEUES, type Job, type QueueSet } from '@agentyard/queue';
import { HttpError } from '@agentyard/http';
import { AgentErrors, isAgentBusy } from '../../errors.ts';
import type { AgentRow } from '../agents/agent-views.ts';
import type { AgentRuntime } from './privileged/agent-runtime.ts';

/** What an owner may ask of an agent on the web (POST /api/agents/:id/<action>). */
export type AgentAction = 'start' | 'stop' | 'restart' | 'repair' | 'reset-memory' | 'update';

export interface AgentActionJob {
  agentId: string;
  action: AgentAction;
  /** `update` only: the image, already checked against the allowed list. */
  image?: string;
}

/** The lifecycle queue's job running an owner's web operation. */
export const AGENT_ACTION_JOB = 'agent-action';

/** How a web operation ended, for the owner's event stream. */
export interface AgentActionOutcome {
  userId: string;
  agentId: string;
  status: string;
  action: AgentAction;
  outcome: 'done' | 'failed';
  error?: string;
}
export type ReportOutcome = (outcome: AgentActionOutcome) => Promise<void>;

/** Statuses in which the provisioning job still owns the agent: an operation now would race it. */
const BEING_PROVISIONED: ReadonlySet<string> = new Set(['pending', 'provisioning', 'deploying']);
/** Operations that bring the agent up, so its owner's plan must cover it. */
const BRINGS_UP: ReadonlySet<AgentAction> = new Set(['start', 'restart', 'repair', 'reset-memory', 'update']);

/**
 * Whether `action` may be asked of `agent` now, before it is queued: not while it is still being
 * provisioned, and (bringing it up) only when its owner's plan and the platform admit it, so a
 * refusal is the answer rather than a failed job.
 */
export async function checkAgentAction(
  agent: AgentRow,
  action: AgentAction,
  admit: (agent: AgentRow) => Promise<unknown>,
): Promise<void> {
  if (BEING_PROVISIONED.has(agent.status)) throw AgentErrors.stillProvisioning();
  if (BRINGS_UP.has(action)) await admit(agent);
}

/** What an owner may update an agent to, as the console lists it: the default image first, then the allowed list. */
export function offeredImages(defaultImage: string, allowed: string): string[] {
  return [...new Set([defaultImage, ...allowed.split(',').filter(Boolean)])];
}

/** The image an owner's update asks for: the default one, or one of the allowed list. */
export function allowedImage(requested: string | undefined, defaultImage: string, allowed: string): string {
  if (requested === undefined) return defaultImage;
  if (!offeredImages(defaultImage, allowed).includes(requested)) throw AgentErrors.imageNotAllowed();
  return requested;
}

/**
 * Queues the operation. One of each kind (an update: to each image) per agent waits at a time
 * (BullMQ deduplication until its outcome is reported): a second click is the same job. The data
 * holds no secret.
 */
export async function enqueueAgentAction(queues: QueueSet, job: AgentActionJob): Promise<void> {
  const id = [AGENT_ACTION_JOB, job.agentId, job.action, ...(job.image ? [job.image] : [])].join('-');
  await queues.add(QUEUES.lifecycle, AGENT_ACTION_JOB, job, { deduplication: { id }, attempts: 3 });
}

const operations: Record<AgentAction, (runtime: AgentRuntime, job: AgentActionJob) => Promise<void>> = {
  start: (r, j) => r.start(j.agentId),
  stop: (r, j) => r.stop(j.agentId),
  restart: (r, j) => r.restart(j.agentId),
  repair: (r, j) => r.repair(j.agentId),
  'reset-memory': (r, j) => r.resetMemory(j.agentId),
  update: (r, j) => r.updateImage(j.agentId, j.image!),
};

/**
 * Runs an owner's operation through the same lifecycle as the backend's routes and reports how it
 * ended; one that brings the agent up is done once its gateway answers /readyz. While another operation holds the agent the job waits without spending an attempt; a
 * refusal or a runtime failure is reported at once (retrying changes nothing); anything else is
 * retried and reported after the last attempt. An agent deleted meanwhile ends the job quietly.
 */
export async function processAgentAction(
  runtime: AgentRuntime,
  job: Job<AgentActionJob>,
  token: string | undefined,
  report: ReportOutcome,
  recheckMs = 2000,
): Promise<string> {
  const { agentId, action } = job.data;
  const before = await runtime.load(agentId);
  if (!before) return 'deleted';
  const ended = async (outcome: 'done' | 'failed', error?: string) => {
    const now = await runtime.load(agentId);
    if (!now) return 'deleted';
    // Once its owner is told, the same operation asked again is a new job, not this one ending.
    await job.removeDeduplicationKey();
    await report({ userId: now.user_id, agentId, status: now.status, action, outcome, ...(error ? { error } : {}) });
    return error ? `failed: ${error}` : 'done';
  };
  try {
    await operations[action](runtime, job.data);
    // Done means answering: the owner's next chat reaches a ready gateway (out of the agent's lock).
    const now = BRINGS_UP.has(action) ? await runtime.load(agentId) : null;
    if (now?.gateway_url && !(await runtime.waitUntilReady(now.gateway_url)))
      return ended('failed', `The agent did not answer after the ${action}`);
  } catch (error) {
    if (isAgentBusy(error)) return lookAgainLater(job, token, recheckMs);
    if (error instanceof HttpError) return error.statusCode === 404 ? 'deleted' : ended('failed', error.message);
    if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw error;
    return ended('failed', `Agent ${action} failed`);
  }
  return ended('done');
}
