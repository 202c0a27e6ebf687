import type { ToolsProfile } from '@agentyard/db';
import { AGENT_PORT, agentSecretFilePath } from '@agentyard/runtime';
import { configAt, isObject, validateAgentConfig, valueAt } from '../agents/config-document.ts';
import type { OpenedChannel } from './channel-vault.ts';

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
  /** The agent's configuration: only what OpenClaw accepts and the image supports is taken (CARRIED_SETTINGS). */
  userConfig: Record<string, unknown>;
  /** The agent's channel bindings from its vault: each bound channel's section is written from them (its token as a file). */
  channels?: Pick<OpenedChannel, 'channel' | 'enabled' | 'settings'>[];
  /** Development and tests only: the Telegram Bot API root the agent's Telegram channel calls (a local server). */
  telegramApiRoot?: string;
}

/** The file (under the agent's state directory) holding a channel's token: OpenClaw's `tokenFile`. */
const tokenFileName = (channel: string) => `${channel}-bot-token`;

/** The secret files an agent's channel bindings need on its state disk (name → content), never in its config. */
export function channelSecretFiles(channels: OpenedChannel[]): Record<string, string> {
  return Object.fromEntries(
    channels
      .filter((c) => c.channel === 'telegram' && c.credentials.botToken)
      .map((c) => [tokenFileName(c.channel), c.credentials.botToken!]),
  );
}

/**
 * The channel sections of the config: a bound channel's settings from its binding over the user's
 * carried ones (its token by file, never inline); an unbound one off whatever the user's
 * configuration says (a channel without its credentials cannot run). Only Telegram is bundled in
 * the image (channel-vault.ts).
 */
function channelSections(input: AgentGatewayConfigInput, carried: Record<string, unknown>): Record<string, unknown> {
  const telegram = input.channels?.find((c) => c.channel === 'telegram');
  const carriedTelegram = isObject(carried.telegram) ? carried.telegram : {};
  return {
    ...carried,
    telegram: telegram
      ? {
          ...carriedTelegram,
          ...telegram.settings,
          enabled: telegram.enabled,
          tokenFile: agentSecretFilePath(tokenFileName('telegram')),
          ...(input.telegramApiRoot ? { apiRoot: input.telegramApiRoot } : {}),
        }
      : { ...carriedTelegram, enabled: false },
  };
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
  for (const [key, value] of Object.entries(over))
    out[key] = isObject(value) && isObject(out[key]) ? merged(out[key], value) : value;
  return out;
}

/** Claude models speak Anthropic's Messages wire to the platform, where their prompt cache works; every other model the OpenAI chat wire. */
const isClaude = (modelId: string) => modelId.startsWith('anthropic/');

/** The platform's AI gateway as the model's wire reaches it (Anthropic's clients add `/v1/messages` themselves). */
function modelWire(gatewayUrl: string, modelId: string) {
  return isClaude(modelId)
    ? { baseUrl: gatewayUrl, api: 'anthropic-messages' }
    : { baseUrl: `${gatewayUrl}/v1`, api: 'openai-completions' };
}

/** OpenClaw marks a custom Anthropic endpoint's prompt for caching only when told to: five minutes, Anthropic's default. */
function promptCaching(modelId: string) {
  return isClaude(modelId) ? { models: { [`agentyard/${modelId}`]: { params: { cacheRetention: 'short' } } } } : {};
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
    agents: {
      defaults: {
        model: `agentyard/${input.modelId}`,
        workspace: '~/.openclaw/workspace',
        ...promptCaching(input.modelId),
      },
    },
    tools: { profile: input.toolsProfile },
    // chatCompletions: the web chat's turns (/api/chat); admin-http-rpc: the control plane's one way to pair the platform's device.
    // controlUi: for the console's origin only. No basePath: the platform serves the UI's page itself and relays only its
    // WebSocket (to the gateway's root), and a path naming the agent would make a claimed warm gateway restart, not hot-reload.
    gateway: {
      mode: 'local',
      bind: 'lan',
      port: AGENT_PORT,
      auth: { mode: 'token', token: input.gatewayToken },
      http: { endpoints: { chatCompletions: { enabled: true } } },
      controlUi: { allowedOrigins: [input.consoleOrigin] },
    },
    plugins: { entries: { 'admin-http-rpc': { enabled: true } } },
    // The scheduler threads a task's prompts into one session (`scheduled:<task id>`); OpenClaw refuses
    // a caller's session key unless allowed, and only under the listed prefixes (`hook:` is its own).
    hooks: {
      enabled: true,
      token: input.hooksToken,
      path: '/hooks',
      allowRequestSessionKey: true,
      allowedSessionKeyPrefixes: ['hook:', 'scheduled:'],
    },
    models: {
      mode: 'merge',
      providers: {
        agentyard: {
          ...modelWire(input.aiGatewayUrl.replace(/\/$/, ''), input.modelId),
          apiKey: input.aiKey,
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
  const config = CARRIED_SETTINGS.reduce(
    (config, path) => {
      const value = valueAt(input.userConfig, path);
      if (value === undefined) return config;
      const setting = configAt(path, value);
      return validateAgentConfig(setting).ok ? merged(config, setting) : config;
    },
    platform as Record<string, unknown>,
  );
  return { ...config, channels: channelSections(input, isObject(config.channels) ? config.channels : {}) };
}
