import { randomBytes } from 'node:crypto';
import { AGENT_PORT, type AgentResources } from './driver.ts';

/** What the docker driver and its warm pool share: names, sizes and engine answers. */

export const NODE_UID = 1000;
export const MB = 1024 ** 2;
/** An agent's state filesystem when its plan names no size. */
export const DEFAULT_STATE_DISK_BYTES = 2 * 1024 * MB;
export const PORT_KEY = `${AGENT_PORT}/tcp`;
export const AGENT_NAME_PREFIX = 'agentyard-agent-';

export const uniqueSuffix = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
export const containerName = (agentId: string) => `${AGENT_NAME_PREFIX}${agentId}-${uniqueSuffix()}`;
export const diskOf = (resources: AgentResources) => resources.diskBytes ?? DEFAULT_STATE_DISK_BYTES;

export const statusCode = (error: unknown) => (error as { statusCode?: number }).statusCode;
export const ignoreMissing = (error: unknown) => {
  if (statusCode(error) !== 404) throw error;
};

/** An agent container as the driver describes it to the engine, warm or not. */
export interface ContainerDescription {
  name: string;
  image: string;
  labels: Record<string, string>;
  resources: AgentResources;
  hostPort: string;
  state: string;
  configDir?: string;
  entrypoint?: string[];
  egressHosts?: string[];
}
