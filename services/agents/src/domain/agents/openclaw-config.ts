import type { ToolsProfile } from '@agentyard/db';
import { AGENT_PORT } from '@agentyard/runtime';

export interface AgentGatewayConfigInput {
  agentId: string;
  modelId: string;
  toolsProfile: ToolsProfile;
  gatewayToken: string;
  hooksToken: string;
  /** The agent's own key for the platform's AI gateway (never a provider key). */
  aiKey: string;
  aiGatewayUrl: string;
  /** The user's configuration (spec §2): only what OpenClaw accepts and the image supports is taken. */
  userConfig: Record<string, unknown>;
}

const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {});
const pick = <T>(v: unknown, ok: (x: unknown) => x is T, fallback: T): T => (ok(v) ? v : fallback);
const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.length <= 20 && x.every((s) => typeof s === 'string' && s.length <= 64);
const LOG_LEVELS = new Set(['error', 'warn', 'info', 'debug']);

/**
 * The agent's openclaw.json. OpenClaw's validation is strict (an unknown key stops the gateway),
 * so this writes only keys validated against openclaw@2026.9.6. The WhatsApp and webchat channel
 * sections are left out: the image has no plugin for them and the gateway refuses to start with
 * them; the user's full channel settings stay in the platform's own configuration.
 */
export function buildAgentGatewayConfig(input: AgentGatewayConfigInput): Record<string, unknown> {
  const user = input.userConfig;
  const channels = record(user.channels);
  const session = record(user.session);
  const level = record(user.logging).level;
  const [, ...rest] = input.modelId.split('/');
  return {
    logging: { level: typeof level === 'string' && LOG_LEVELS.has(level) ? level : 'info' },
    agents: { defaults: { model: `agentyard/${input.modelId}`, workspace: '/home/node/.openclaw/workspace' } },
    tools: { profile: input.toolsProfile },
    gateway: { mode: 'local', bind: 'lan', port: AGENT_PORT, auth: { mode: 'token', token: input.gatewayToken } },
    hooks: { enabled: true, token: input.hooksToken, path: '/hooks' },
    models: {
      mode: 'merge',
      providers: {
        agentyard: {
          baseUrl: `${input.aiGatewayUrl.replace(/\/$/, '')}/v1`,
          apiKey: input.aiKey,
          api: 'openai-completions',
          timeoutSeconds: 120,
          headers: { 'X-Agentyard-Agent': input.agentId },
          models: [{ id: input.modelId, name: rest.join('/') || input.modelId }],
        },
      },
    },
    channels: {
      telegram: { enabled: pick(record(channels.telegram).enabled, isBool, false) },
      discord: { enabled: pick(record(channels.discord).enabled, isBool, false) },
    },
    session: {
      dmScope: 'per-channel-peer',
      resetTriggers: pick(session.resetTriggers, isStrings, ['/new', '/reset']),
    },
    skills: { install: { nodeManager: 'npm' } },
  };
}
