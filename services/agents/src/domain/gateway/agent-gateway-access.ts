import {
  type AgentControlClient,
  AgentGatewayError,
  openAgentSecret,
  platformDeviceSeed,
  withAgentControl,
} from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import { HttpError } from '@agentyard/http';
import { AgentWorkErrors } from '../../errors.ts';
import type { AgentRow } from '../agents/agent-views.ts';

export interface AgentGateway {
  agentId: string;
  baseUrl: string;
  gatewayToken: string;
}

/** The running agent's gateway, or 409 AGENT_NOT_RUNNING: a turn never goes to a stopped or half-made agent. */
export function runningAgentGateway(row: AgentRow, keyring: Keyring): AgentGateway {
  if (row.status !== 'running' || !row.gateway_url || !row.gateway_token_sealed) throw AgentWorkErrors.notRunning();
  return {
    agentId: row.id,
    baseUrl: row.gateway_url,
    gatewayToken: openAgentSecret(keyring, row.id, 'gateway-token', row.gateway_token_sealed),
  };
}

/** A gateway failure as the caller sees it: 504 for a timeout, 502 otherwise (never the gateway's own text). */
export function gatewayFailure(error: unknown): Error {
  if (error instanceof HttpError) return error;
  if (error instanceof AgentGatewayError && error.tooLarge) return AgentWorkErrors.answerTooLarge(error.tooLarge);
  if (error instanceof AgentGatewayError && error.status === 504) return AgentWorkErrors.gatewayTimeout();
  if (error instanceof Error && (error.name === 'TimeoutError' || /timed out/.test(error.message)))
    return AgentWorkErrors.gatewayTimeout();
  return AgentWorkErrors.gatewayUnavailable();
}

/**
 * Runs `work` on the agent's control plane. The platform's device key derives from the agent's own
 * gateway token, so whoever holds it already has full operator access and a rotated token re-pairs.
 */
export async function onAgentControlPlane<T>(
  gateway: AgentGateway,
  connectTimeoutMs: number,
  work: (client: AgentControlClient) => Promise<T>,
): Promise<T> {
  try {
    return await withAgentControl(
      {
        baseUrl: gateway.baseUrl,
        gatewayToken: gateway.gatewayToken,
        deviceSeed: platformDeviceSeed(gateway.gatewayToken, gateway.agentId),
        connectTimeoutMs,
      },
      work,
    );
  } catch (error) {
    throw gatewayFailure(error);
  }
}
