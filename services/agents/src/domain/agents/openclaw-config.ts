import type { ToolsProfile } from '@agentyard/db';
import { AGENT_PORT } from '@agentyard/runtime';
import { controlUiBasePath } from '../agent-work/control-ui.ts';
import { configAt, isObject, validateAgentConfig, valueAt } from '../workspace/openclaw-config.ts';

export interface AgentGatewayConfigInput {
  agentId: string;
  modelId: string;
  toolsProfile: ToolsProfile;
  gatewayToken: string;
  hooksToken: string;
  /** The agent's own key for the platform's AI gateway (never a provider key). */
  aiKey: string;
  aiGatewayUrl: string;
  /** The console's origin (PUBLIC_BASE_URL's): the one browser origin the gateway accepts for its Control UI, reached through the platform's proxy. */
  consoleOrigin: string;
  /** The agent's configuration (spec §2): only what OpenClaw accepts and the image supports is taken (CARRIED_SETTINGS). */
  userConfig: Record<string, unknown>;
}

/**
 * The user's settings an agent's openclaw.json carries, by path, each checked against openclaw@2026.9.6
 * (`openclaw config validate`: agents-openclaw-config.test.ts). The rest of a configuration is the
 * platform's (model, workspace, tools profile, gateway, hooks, models), a way around the plan
 * (`tools.allow` adds tools beyond the profile the plan fixed: a solo agent could allow `exec`; only
 * `tools.deny`, which takes tools away, is carried), a path on the host under the process driver
 * (`logging.file`), or a channel the gateway refuses to start with: WhatsApp (no plugin in the image)
 * and webchat (not an OpenClaw channel). Those stay in the platform's own configuration.
 */
export const CARRIED_SETTINGS = [
  'logging.level',
  'logging.consoleLevel',
  'agents.defaults.timeoutSeconds',
  'agents.defaults.maxConcurrent',
  'tools.deny',
  'channels.telegram.enabled',
  'channels.telegram.allowFrom',
  'channels.telegram.dmPolicy',
  'channels.discord.enabled',
  'channels.discord.allowFrom',
  'session.dmScope',
  'session.resetTriggers',
  'skills.install.nodeManager',
  'skills.allowBundled',
  'skills.entries',
  'messages.groupChat.mentionPatterns',
] as const;

/** `over` merged into `base`, objects key by key (arrays and values replace). */
function merged(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = isObject(value) && isObject(out[key]) ? merged(out[key], value) : value;
  return out;
}

/**
 * The agent's openclaw.json: the platform's settings, then each carried setting of the user's
 * configuration that is valid on its own (a configuration stored before a rule changed still
 * gives what it can).
 */
export function buildAgentGatewayConfig(input: AgentGatewayConfigInput): Record<string, unknown> {
  const [, ...rest] = input.modelId.split('/');
  const platform = {
    logging: { level: 'info' },
    // `~` is the gateway's HOME (/home/node in the image; the agent's own home under the process driver, not a folder all agents share).
    agents: { defaults: { model: `agentyard/${input.modelId}`, workspace: '~/.openclaw/workspace' } },
    tools: { profile: input.toolsProfile },
    // chatCompletions: the web chat's turns (/api/chat); admin-http-rpc: the control plane's one way to pair the platform's device.
    // controlUi: served under the platform's proxy path (its assets and WebSocket stay under it), for the console's origin only.
    gateway: {
      mode: 'local',
      bind: 'lan',
      port: AGENT_PORT,
      auth: { mode: 'token', token: input.gatewayToken },
      http: { endpoints: { chatCompletions: { enabled: true } } },
      controlUi: { basePath: controlUiBasePath(input.agentId), allowedOrigins: [input.consoleOrigin] },
    },
    plugins: { entries: { 'admin-http-rpc': { enabled: true } } },
    // The scheduler threads a task's prompts into one session (`scheduled:<task id>`); OpenClaw refuses
    // a caller's session key unless allowed, and only under the listed prefixes (`hook:` is its own).
    hooks: { enabled: true, token: input.hooksToken, path: '/hooks', allowRequestSessionKey: true, allowedSessionKeyPrefixes: ['hook:', 'scheduled:'] },
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
    channels: { telegram: { enabled: false }, discord: { enabled: false } },
    session: { dmScope: 'per-channel-peer', resetTriggers: ['/new', '/reset'] },
    skills: { install: { nodeManager: 'npm' } },
  };
  return CARRIED_SETTINGS.reduce(
    (config, path) => {
      const value = valueAt(input.userConfig, path);
      if (value === undefined) return config;
      const setting = configAt(path, value);
      return validateAgentConfig(setting).ok ? merged(config, setting) : config;
    },
    platform as Record<string, unknown>,
  );
}
