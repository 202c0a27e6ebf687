import Docker from 'dockerode';
import { LABELS } from '@agentyard/runtime';

/** Why a journey whose agents run in containers and call the edge cannot run here; false when it can. */
export const noAgentContainers: string | false =
  process.env.RUNTIME_DRIVER !== 'docker' || !process.env.DOCKER_HOST
    ? 'no container engine'
    : !process.env.EDGE_AGENT_HOST
      ? "no host address for the edge's agent listener"
      : false;

/** The run's container engine and the containers this test's platform made (they carry its label), to check and, at the end, remove. */
export function runContainers() {
  const own = process.env.QUEUE_PREFIX!;
  const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
  const ours = () => docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${own}`] } });
  const removeOurs = async () => {
    for (const c of await ours())
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
  };
  return { own, docker, ours, removeOurs };
}
