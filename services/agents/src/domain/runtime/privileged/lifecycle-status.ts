import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { RuntimeError } from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import { toolsProfileOf } from '../../agents/plans.ts';
import type { AgentFailure, AgentRow } from '../../agents/agent-views.ts';
import type { ContainerLauncher } from './launch.ts';

/** The lifecycle's log: failures of the engine are errors, what it undoes is a warning. */
export interface LifecycleLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** An agent admitted to come up: `resized` when its plan changed, `previous` the plan its current container was made for. */
export type AdmittedAgent = AgentRow & { resized: boolean; previous: Pick<AgentRow, 'plan' | 'tools_profile'> };

export const loadAgent = (db: SystemDb, id: string) =>
  db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();

export async function mustLoad(db: SystemDb, id: string): Promise<AgentRow> {
  const row = await loadAgent(db, id);
  if (!row) throw AgentErrors.notFound();
  return row;
}

/**
 * The agent, once its owner's plan and the platform allow it to come up, on that plan: after an
 * upgrade or a downgrade its plan and tools profile are the current plan's, and `resized` says
 * its container must be made again at the plan's size (its state disk stays); `previous` is the
 * plan its current container was made for.
 */
export async function admitted(
  { db, admit }: { db: SystemDb; admit: (agent: AgentRow) => Promise<string> },
  id: string,
): Promise<AdmittedAgent> {
  const row = await mustLoad(db, id);
  const plan = await admit(row);
  const previous = { plan: row.plan, tools_profile: row.tools_profile };
  if (plan === row.plan) return { ...row, resized: false, previous };
  const followed = await db
    .updateTable('agents')
    .set({ plan, tools_profile: toolsProfileOf(plan), updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...followed, resized: true, previous };
}

export async function setStatus(db: SystemDb, agentId: string, status: AgentRow['status']): Promise<void> {
  // An operation that sets the status ends any hibernation (a start or restart resumes a paused container).
  await db
    .updateTable('agents')
    .set({
      status,
      hibernation: null,
      suspended_at: null,
      last_error: null,
      last_error_detail: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', agentId)
    .execute();
}

/** `call` on the engine: a runtime error is logged and answered as the operation's failure, without its message. */
export async function runtimeCall<T>(
  log: LifecycleLog,
  operation: string,
  agentId: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
    log.error({ agentId, operation, err: { message: error.message } }, 'runtime operation failed');
    throw AgentErrors.runtimeFailed(operation);
  }
}

/** Undoes a failed deployment: no container, no port, status error with the failure (and its detail, kept from the web). */
export async function undeploy(
  { db, launcher, log }: { db: SystemDb; launcher: ContainerLauncher; log: LifecycleLog },
  agentId: string,
  failure: AgentFailure,
  detail: string | null = null,
): Promise<void> {
  log.warn({ agentId, failure, detail }, 'agent deployment failed');
  await launcher
    .removeContainers(agentId)
    .catch((error) =>
      log.warn(
        { agentId, err: { message: (error as Error).message } },
        'could not remove containers of a failed deployment',
      ),
    );
  await db
    .updateTable('agents')
    .set({
      status: 'error',
      last_error: failure,
      last_error_detail: detail,
      container_id: null,
      host_port: null,
      gateway_url: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', agentId)
    .execute();
}

/** A running agent's URL and id become the user's runtime URL and instance id. */
export async function recordUserRuntime(db: SystemDb, publicUrl: string, agentId: string): Promise<void> {
  const agent = await mustLoad(db, agentId);
  await db
    .updateTable('users')
    .set({ runtime_url: `${publicUrl.replace(/\/$/, '')}/${agent.id}`, runtime_instance_id: agent.id })
    .where('id', '=', agent.user_id)
    .execute();
}
