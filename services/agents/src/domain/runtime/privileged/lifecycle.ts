import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { ExclusiveOperation } from '../agent-operations.ts';
import type { AgentFailure, AgentRow } from '../../agents/agent-views.ts';
import type { ReloadKind } from '../../gateway/config-reload.ts';
import type { agentHealth } from '../health.ts';
import type { ContainerLauncher, Deployed } from './launch.ts';
import type { WarmContainers } from './warm-pool.ts';
import { type LifecycleLog, loadAgent, recordUserRuntime, setStatus, undeploy } from './lifecycle-status.ts';
import { bringUp, rebuild, resetMemory, restartAgent } from './bring-up.ts';
import { applyConfig, updateImage } from './agent-updates.ts';
import { removeAgent, stopAgent, stopBeyondPlan } from './take-down.ts';
import { reconcile } from './reconciliation.ts';

export interface AgentLifecycleOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  /** Agents' public base URL (`<url>/<agentId>`), stored on the user once an agent runs. */
  publicUrl: string;
  /** One container operation per agent at a time, across processes. */
  exclusive: ExclusiveOperation;
  launcher: ContainerLauncher;
  warm: WarmContainers;
  readiness: Pick<ReturnType<typeof agentHealth>, 'waitUntilReady'>;
  /** The plan the agent comes up on now; throws why it may not (its owner's plan, the platform's capacity). */
  admit: (agent: AgentRow) => Promise<string>;
  log: LifecycleLog;
}

/**
 * The operations on an agent's containers. Each leaves the row and the engine agreeing: a failure
 * removes what it created, so nothing is orphaned.
 */
export function agentLifecycle(options: AgentLifecycleOptions) {
  const { db, exclusive } = options;
  return {
    load: (id: string) => loadAgent(db, id),

    // Every operation below that changes an agent's containers runs under `exclusive` and reads
    // the agent's row once it has its turn, so it acts on what the previous operation left.

    /** Makes sure the agent has a running container: starts the recorded one, or creates it. */
    deploy: (agentId: string): Promise<Deployed> => exclusive(agentId, () => bringUp(options, agentId)),

    /** A start without taking the agent's turn, for a caller that holds it (a wake from a stop): the same admission and plan as `start`. */
    bringUp: (agentId: string): Promise<Deployed> => bringUp(options, agentId),

    /** Undoes a failed deployment: no container, no port, status error with the failure (and its detail, kept from the web). */
    failDeployment: (agentId: string, failure: AgentFailure, detail?: string): Promise<void> =>
      exclusive(agentId, () => undeploy(options, agentId, failure, detail)),

    setStatus: (agentId: string, status: AgentRow['status']) => setStatus(db, agentId, status),

    /** A running agent's URL and id become the user's runtime URL and instance id. */
    recordUserRuntime: (agentId: string) => recordUserRuntime(db, options.publicUrl, agentId),

    start: (agentId: string): Promise<void> =>
      exclusive(agentId, async () => {
        await bringUp(options, agentId);
        await setStatus(db, agentId, 'running');
      }),

    stop: (agentId: string): Promise<void> => exclusive(agentId, () => stopAgent(options, agentId)),

    /** Stops an agent its owner's plan no longer covers (see `stopBeyondPlan`): false when already stopped or deleted. */
    stopBeyondPlan: (agentId: string): Promise<boolean> => exclusive(agentId, () => stopBeyondPlan(options, agentId)),

    restart: (agentId: string): Promise<void> => exclusive(agentId, () => restartAgent(options, agentId)),

    repair: (agentId: string): Promise<void> => exclusive(agentId, () => rebuild(options, agentId)),

    /** A repair without taking the agent's turn, for a caller that holds it (a restore brings the agent up on its new state). */
    rebuild: (agentId: string): Promise<void> => rebuild(options, agentId),

    /** Gives the agent its stored configuration (see `applyConfig`): in place by hot reload, or by a rebuild. */
    applyConfig: (agentId: string, reload: ReloadKind = 'restart'): Promise<string> =>
      exclusive(agentId, () => applyConfig(options, agentId, reload)),

    /** Wipes the agent's memory and identity state (not its configuration) and starts it again. */
    resetMemory: (agentId: string): Promise<void> => exclusive(agentId, () => resetMemory(options, agentId)),

    /** Replaces the image (see `updateImage`), rolled back to the previous container on any failure. */
    updateImage: (agentId: string, image: string): Promise<void> =>
      exclusive(agentId, () => updateImage(options, agentId, image)),

    /** Removes the agent's containers, its state and its row (freeing its port); true when it existed. */
    remove: (agentId: string): Promise<boolean> => exclusive(agentId, () => removeAgent(options, agentId)),

    reconcile: (deadlineMs: number) => reconcile(options, deadlineMs),
  };
}
