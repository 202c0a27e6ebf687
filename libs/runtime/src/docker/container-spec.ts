import type Docker from 'dockerode';
import { AGENT_NAME_PREFIX, type ContainerDescription, MB, NODE_UID, PORT_KEY } from '../docker-common.ts';
import { LABELS } from '../driver.ts';
import { grantedProxyUrl } from '../egress-grant.ts';
import { egressProxyEnv } from '../egress.ts';
import type { DockerDriverOptions } from './engine.ts';
import { CONFIG_FILE } from './host-directories.ts';

const HOME = '/home/node';
export const STATE_DIR = `${HOME}/.openclaw`;
/** Where a container's config directory is mounted; OPENCLAW_CONFIG_PATH names the file in it. */
const CONFIG_MOUNT = '/run/agentyard';
/**
 * The only writable places besides the agent's state, all in memory (counted in its memory limit):
 * OpenClaw's temp root (/tmp/openclaw) and its fallback ($HOME/.cache/openclaw-<uid>), Node's
 * compile cache (/tmp), and what Podman mounts on a read-only root anyway (/run, /var/tmp), bounded.
 */
const TMPFS = {
  '/tmp': `rw,nosuid,nodev,size=${256 * MB},mode=1777`,
  [`${HOME}/.cache`]: `rw,nosuid,nodev,size=${256 * MB},mode=1777`,
  '/var/tmp': `rw,nosuid,nodev,size=${64 * MB},mode=1777`,
  '/run': `rw,nosuid,nodev,size=${16 * MB},mode=755`,
};
/** Docker keeps three files of 10 MB; Podman 4.3 keeps one, truncated at 10 MB (max-file is Docker's). */
const LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } };

/** The name an agent's gateway answers to on the shared network (a DNS label: the id is a UUID). */
export const agentGatewayHost = (agentId: string) => `${AGENT_NAME_PREFIX}${agentId}`;

/** A warm container is granted nothing: an agent with channels never claims one (its grant is in its env). */
const proxyUrlOf = (proxy: { url: string; grantKey?: string }, c: ContainerDescription) =>
  proxy.grantKey
    ? grantedProxyUrl(proxy.url, proxy.grantKey, c.labels[LABELS.agentId] ?? 'warm', c.egressHosts ?? [])
    : proxy.url;

/**
 * Everything the engine is told about an agent container, warm or not. Nothing of the platform's
 * environment goes in: the agent gets only its config (and, on a local engine, where it is).
 * `joined`: the agent's own network ('' for none); `cpus`: its CPU limit, within the host's.
 */
export function createOptions(
  options: DockerDriverOptions,
  c: ContainerDescription,
  joined: string,
  cpus: number,
): Docker.ContainerCreateOptions {
  return {
    name: c.name,
    Image: c.image,
    Labels: c.labels,
    // uid 1000 whatever the image says (an image a caller names may run as root).
    User: `${NODE_UID}:${NODE_UID}`,
    Env: [
      `HOME=${HOME}`,
      ...(c.configDir ? [`OPENCLAW_CONFIG_PATH=${CONFIG_MOUNT}/${CONFIG_FILE}`] : []),
      ...(options.egressProxy ? egressProxyEnv(proxyUrlOf(options.egressProxy, c), options.egressProxy.direct) : []),
    ],
    ...(c.entrypoint ? { Entrypoint: c.entrypoint, Cmd: [] } : {}),
    ExposedPorts: { [PORT_KEY]: {} },
    StopTimeout: options.stopTimeoutSeconds,
    // On the shared network the agent answers to a name of its own (a container's name changes with each replacement).
    ...(joined
      ? {
          NetworkingConfig: {
            EndpointsConfig: { [joined]: { Aliases: [agentGatewayHost(c.labels[LABELS.agentId] ?? '')] } },
          },
        }
      : {}),
    HostConfig: {
      // HostPort '' lets the engine choose a free port. On the shared network nothing is published.
      ...(options.network
        ? {}
        : { PortBindings: { [PORT_KEY]: [{ HostIp: options.publishHost, HostPort: c.hostPort }] } }),
      Binds: [`${c.state}:${STATE_DIR}`, ...(c.configDir ? [`${c.configDir}:${CONFIG_MOUNT}:ro`] : [])],
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true,
      PidsLimit: options.pidsLimit,
      // Nothing of the image can change; what an agent writes goes to its bounded state or to memory.
      ReadonlyRootfs: true,
      Tmpfs: TMPFS,
      ShmSize: 64 * MB,
      LogConfig: LOG_CONFIG,
      Memory: c.resources.memoryBytes,
      // No swap beyond the memory limit: an agent cannot spill onto the host's swap.
      MemorySwap: c.resources.memoryBytes,
      NanoCpus: Math.round(cpus * 1e9),
      RestartPolicy: { Name: 'no' },
      ...(joined ? { NetworkMode: joined } : options.networkMode ? { NetworkMode: options.networkMode } : {}),
    },
  };
}
