import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { statusCode } from './docker-common.ts';
import { LABELS } from './driver.ts';

/**
 * Containers of the platform that join every agent's network (docker-compose.yml labels them): the
 * egress proxy, agents' only way out, and the processes that call agents' gateways. The label's
 * value is the platform instance (RUNTIME_INSTANCE).
 */
export const PEER_LABEL = 'agentyard.agent-peer';
/** The name a peer answers to on an agent's networks (the egress proxy's `egress`), when it needs one. */
export const PEER_ALIAS_LABEL = 'agentyard.agent-peer-alias';

/**
 * The start of every agent network's bridge name. The engine puts each network's gateway address on
 * the host (its DNS answers there); the host's rules (infra/container-engine/up.sh) take nothing from
 * these bridges but DNS, so no host service is within an agent's reach.
 */
export const AGENT_BRIDGE_PREFIX = 'ayg';

/** A bridge name of its own for the network `name` (at most 15 characters, as Linux allows). */
export const agentBridgeOf = (name: string) =>
  `${AGENT_BRIDGE_PREFIX}${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;

/**
 * One network per agent: internal (no route anywhere), shared with the platform's peers only. Agents
 * on one network reached each other's gateways and whatever they listened on; on networks of their
 * own they have no route to another agent's address and no name for it. The engine's DNS keeps
 * working for the peers, which find each agent by name across all their networks.
 */
export function createAgentNetworks(docker: Docker, options: { prefix: string; instance: string }) {
  const nameOf = (agentId: string) => `${options.prefix}-${agentId}`;
  const peers = () => docker.listContainers({ filters: { label: [`${PEER_LABEL}=${options.instance}`] } });

  /** Joins every running peer not yet on `name` (a peer recreated since lost its networks). */
  const joinPeers = async (name: string) => {
    for (const peer of await peers()) {
      if (peer.NetworkSettings?.Networks?.[name]) continue;
      const alias = peer.Labels?.[PEER_ALIAS_LABEL];
      await docker
        .getNetwork(name)
        .connect({ Container: peer.Id, EndpointConfig: alias ? { Aliases: [alias] } : {} })
        .catch((error: unknown) => {
          // Joined meanwhile by another process (409 on Docker; Podman says so in a 500).
          if (statusCode(error) !== 409 && !/already (connected|exists)/i.test((error as Error).message)) throw error;
        });
    }
  };

  return {
    nameOf,
    /** The agent's network, made if missing, with every peer on it: before its container is created or started. */
    async ensure(agentId: string): Promise<string> {
      const name = nameOf(agentId);
      const exists = await docker
        .getNetwork(name)
        .inspect()
        .then(
          () => true,
          (error: unknown) => {
            if (statusCode(error) === 404) return false;
            throw error;
          },
        );
      if (!exists)
        await docker
          .createNetwork({
            Name: name,
            Internal: true,
            CheckDuplicate: true,
            Options: { 'com.docker.network.bridge.name': agentBridgeOf(name) },
            Labels: { [LABELS.managed]: 'true', [LABELS.instance]: options.instance, [LABELS.agentId]: agentId },
          })
          .catch((error: unknown) => {
            if (statusCode(error) !== 409) throw error;
          });
      await joinPeers(name);
      return name;
    },
    /** The agent is gone: its peers leave its network, which goes too. */
    async remove(agentId: string): Promise<void> {
      const name = nameOf(agentId);
      const network = docker.getNetwork(name);
      const inspected = await network.inspect().catch((error: unknown) => {
        if (statusCode(error) === 404) return null;
        throw error;
      });
      if (!inspected) return;
      for (const id of Object.keys((inspected as { Containers?: Record<string, unknown> }).Containers ?? {}))
        await network.disconnect({ Container: id, Force: true }).catch(() => undefined);
      await network.remove().catch((error: unknown) => {
        if (statusCode(error) !== 404) throw error;
      });
    },
  };
}
