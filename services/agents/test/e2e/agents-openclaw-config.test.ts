import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import {
  buildAgentGatewayConfig,
  CARRIED_SETTINGS,
  channelSecretFiles,
} from '../../src/domain/gateway/gateway-config.ts';
import { defaultAgentConfig, validateAgentConfig, valueAt } from '../../src/domain/agents/config-document.ts';

// What the platform writes into an agent's openclaw.json, checked by the installed OpenClaw itself
// (`openclaw config validate`, strict: an unknown key or value stops its gateway). OpenClaw is
// installed by the agent image build, which the test run does wherever a container engine can be
// had (CI's machines); elsewhere this file says so and skips.

const noOpenClaw =
  !existsSync(OPENCLAW_ENTRY) &&
  !process.env.CI &&
  `OpenClaw is not installed at ${OPENCLAW_ENTRY} (infra/agent-image/build.sh installs it)`;

const input = (userConfig: Record<string, unknown>) => ({
  agentId: '6f1c2a52-32a8-4a8e-9a38-1b1b6f1d1e11',
  modelId: 'openrouter/moonshotai/kimi-k2.5',
  toolsProfile: 'coding' as const,
  gatewayToken: 'gateway-token-of-the-test',
  hooksToken: 'hooks-token-of-the-test',
  aiKey: 'ag_key-of-the-test',
  aiGatewayUrl: 'http://127.0.0.1:3001',
  consoleOrigin: 'https://console.example',
  userConfig,
});

/** `openclaw config validate` on a config file: its verdict (stdout and stderr). */
async function openClawVerdict(t: Test, config: Record<string, unknown>): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'agentyard-openclaw-config-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  await mkdir(join(home, '.openclaw'));
  await writeFile(join(home, '.openclaw', 'openclaw.json'), JSON.stringify(config));
  const run = promisify(execFile)(process.execPath, [OPENCLAW_ENTRY, 'config', 'validate'], {
    env: { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeout: 60_000,
  });
  const { stdout, stderr } = await run.catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? '',
  }));
  return `${stdout}${stderr}`;
}

// Every carried setting at a value other than the platform's own, and every key a user may keep
// that is not carried.
const everything = {
  logging: { level: 'debug', consoleLevel: 'warn', file: '/etc/agent.log' },
  agents: { defaults: { model: 'openai/gpt-4o', workspace: '/elsewhere', timeoutSeconds: 300, maxConcurrent: 2 } },
  tools: { profile: 'full', allow: ['exec', 'write'], deny: ['browser'] },
  gateway: {
    bind: 'loopback',
    auth: { mode: 'password' },
    controlUi: { enabled: true, allowedOrigins: ['https://attacker.example'] },
  },
  channels: {
    whatsapp: { allowFrom: ['+15550100'], dmPolicy: 'open' },
    telegram: { enabled: false, allowFrom: ['12345'], dmPolicy: 'allowlist' },
    discord: { enabled: false, allowFrom: ['alice'] },
    webchat: { enabled: true },
  },
  session: { dmScope: 'per-peer', resetTriggers: ['/fresh'] },
  skills: { install: { nodeManager: 'pnpm' }, allowBundled: ['weather'], entries: { weather: { enabled: true } } },
  messages: { groupChat: { mentionPatterns: ['@claw'] } },
};

t.test(
  "every setting a user may keep: the carried ones reach openclaw.json, the rest stay the platform's, and OpenClaw accepts the file",
  { skip: noOpenClaw },
  async (t) => {
    t.ok(validateAgentConfig(everything).ok, 'a configuration the platform accepts');
    const written = buildAgentGatewayConfig(input(everything));
    for (const path of CARRIED_SETTINGS) t.same(valueAt(written, path), valueAt(everything, path), `${path} carried`);
    t.same(
      valueAt(written, 'agents.defaults.model'),
      'agentyard/openrouter/moonshotai/kimi-k2.5',
      "the model is the agent's",
    );
    t.equal(
      valueAt(written, 'agents.defaults.workspace'),
      '~/.openclaw/workspace',
      "the gateway's HOME: /home/node in the image",
    );
    t.equal(valueAt(written, 'tools.profile'), 'coding', 'the tools profile fixed at creation');
    t.same(
      written.gateway,
      {
        mode: 'local',
        bind: 'lan',
        port: 18789,
        auth: { mode: 'token', token: 'gateway-token-of-the-test' },
        http: { endpoints: { chatCompletions: { enabled: true } } },
        controlUi: { allowedOrigins: ['https://console.example'] },
      },
      "the gateway section is the platform's: the chat endpoint on, the Control UI for the console's origin only (not the user's origins), and nothing naming the agent (a warm gateway hot-reloads it)",
    );
    t.equal(valueAt(written, 'tools.allow'), undefined, "no tools beyond the plan's profile");
    t.equal(valueAt(written, 'logging.file'), undefined, "no log file path of the user's");
    t.equal(valueAt(written, 'channels.whatsapp'), undefined, 'no WhatsApp section (no plugin in the image)');
    t.equal(valueAt(written, 'channels.webchat'), undefined, 'no webchat section (not an OpenClaw channel)');
    t.match(await openClawVerdict(t, written), /Config valid/);
  },
);

t.test("the interface's default configuration gives a file OpenClaw accepts", { skip: noOpenClaw }, async (t) => {
  for (const plan of ['solo', 'label'])
    t.match(await openClawVerdict(t, buildAgentGatewayConfig(input(defaultAgentConfig(plan)))), /Config valid/, plan);
});

t.test(
  'the checks agree with OpenClaw: what the platform refuses, OpenClaw refuses too',
  { skip: noOpenClaw },
  async (t) => {
    const withIdleMinutes = buildAgentGatewayConfig(input({}));
    (withIdleMinutes.session as Record<string, unknown>).idleMinutes = 60;
    t.match(
      await openClawVerdict(t, withIdleMinutes),
      /Unrecognized key: "idleMinutes"/,
      'OpenClaw refuses session.idleMinutes',
    );
    const withWebchat = buildAgentGatewayConfig(input({}));
    (withWebchat.channels as Record<string, unknown>).webchat = { enabled: true };
    t.match(await openClawVerdict(t, withWebchat), /unknown channel id: webchat/, 'and a webchat channel section');
    t.match(
      validateAgentConfig({ session: { idleMinutes: 60 } }),
      { ok: false, message: 'Invalid config: unknown key session.idleMinutes' },
      "and so does the platform (webchat is the interface's own default, kept but never written)",
    );
  },
);

t.test(
  'a configuration stored before a rule changed: each setting valid on its own is carried, the others left out',
  async (t) => {
    const stored = {
      logging: { level: 'loud' },
      session: { idleMinutes: 30, resetTriggers: ['/again'] },
      tools: { deny: ['exec'] },
    };
    t.notOk(validateAgentConfig(stored).ok, 'no longer a valid configuration as a whole');
    const written = buildAgentGatewayConfig(input(stored));
    t.equal(valueAt(written, 'logging.level'), 'info', "an invalid level: the platform's");
    t.same(
      valueAt(written, 'session'),
      { dmScope: 'per-channel-peer', resetTriggers: ['/again'] },
      'the valid trigger carried, the unknown key not',
    );
    t.same(valueAt(written, 'tools'), { profile: 'coding', deny: ['exec'] });
  },
);

t.test(
  "a Claude model speaks Anthropic's Messages wire to the platform with its prompt cache on, and OpenClaw accepts the file",
  { skip: noOpenClaw },
  async (t) => {
    const written = buildAgentGatewayConfig({ ...input({}), modelId: 'anthropic/claude-haiku-4-5' });
    t.has(valueAt(written, 'models.providers.agentyard'), {
      baseUrl: 'http://127.0.0.1:3001',
      api: 'anthropic-messages',
      apiKey: 'ag_key-of-the-test',
      models: [{ id: 'anthropic/claude-haiku-4-5' }],
    });
    t.same(valueAt(written, 'agents.defaults.models'), {
      'agentyard/anthropic/claude-haiku-4-5': { params: { cacheRetention: 'short' } },
    });
    t.match(await openClawVerdict(t, written), /Config valid/);
    const other = buildAgentGatewayConfig(input({}));
    t.has(
      valueAt(other, 'models.providers.agentyard'),
      { baseUrl: 'http://127.0.0.1:3001/v1', api: 'openai-completions' },
      'every other model the OpenAI chat wire',
    );
    t.equal(valueAt(other, 'agents.defaults.models'), undefined);
  },
);

t.test(
  "a bound Telegram channel: its section from the vault's binding, the token only as a file OpenClaw reads, and OpenClaw accepts the file",
  { skip: noOpenClaw },
  async (t) => {
    const botToken = '123456789:AAE-the-bot-token-of-the-test_xyz';
    const binding = {
      channel: 'telegram',
      enabled: true,
      settings: { dmPolicy: 'allowlist' as const, allowFrom: ['4242'] },
      credentials: { botToken },
    };
    const written = buildAgentGatewayConfig({
      ...input({ channels: { telegram: { enabled: false, dmPolicy: 'pairing' } } }),
      channels: [binding],
      telegramApiRoot: 'http://10.0.2.2:39999',
    });
    t.same(
      valueAt(written, 'channels.telegram'),
      {
        enabled: true,
        dmPolicy: 'allowlist',
        allowFrom: ['4242'],
        tokenFile: '~/.openclaw/credentials/agentyard/telegram-bot-token',
        apiRoot: 'http://10.0.2.2:39999',
      },
      "the binding's settings over the user's, the token by file, the development Bot API root",
    );
    t.notOk(JSON.stringify(written).includes(botToken), 'the token is nowhere in the config');
    t.same(channelSecretFiles([binding]), { 'telegram-bot-token': botToken }, 'it is a file of its own');
    t.match(await openClawVerdict(t, written), /Config valid/);
    const unbound = buildAgentGatewayConfig(input({ channels: { telegram: { enabled: true, dmPolicy: 'pairing' } } }));
    t.same(
      valueAt(unbound, 'channels.telegram'),
      { enabled: false, dmPolicy: 'pairing' },
      'without a binding Telegram is off, whatever the configuration says',
    );
    t.same(channelSecretFiles([]), {}, 'and no file');
  },
);
