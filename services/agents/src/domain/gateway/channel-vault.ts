import type { Keyring } from '@agentyard/crypto';
import { sql, type Database, type Kysely } from '@agentyard/db';
import { ChannelErrors } from '../../errors.ts';

/** A channel an agent can be bound to, as the platform supports it with the installed OpenClaw. */
interface SupportedChannel {
  /** The credential fields, under OpenClaw's own config names; the first is the one hinted at. */
  credentials: readonly string[];
  /** Each credential's shape (Telegram's bot token: `<bot id>:<secret>`). */
  pattern: RegExp;
  /**
   * The hosts the channel's client calls, all the egress proxy lets an agent with it connected reach
   * (`*.host`: its subdomains). docs/agent-runtime.md, "Channels", lists them.
   */
  hosts: readonly string[];
}

/** Channels the agent image runs: Telegram ships inside openclaw@2026.9.6 (dist/extensions/telegram). */
export const SUPPORTED_CHANNELS: Record<string, SupportedChannel> = {
  // The Bot API, and its file downloads (api.telegram.org/file/bot<token>/...).
  telegram: { credentials: ['botToken'], pattern: /^[0-9]{1,20}:[A-Za-z0-9_-]{20,200}$/, hosts: ['api.telegram.org'] },
};

/**
 * The hosts an agent's enabled channels call (its egress grant). A Bot API root of development and
 * tests (AGENT_TELEGRAM_API_ROOT) stands for Telegram's own host.
 */
export function channelEgressHosts(
  channels: readonly Pick<OpenedChannel, 'channel' | 'enabled'>[],
  telegramApiRoot?: string,
): string[] {
  const hosts = channels
    .filter((c) => c.enabled)
    .flatMap((c) =>
      c.channel === 'telegram' && telegramApiRoot
        ? [new URL(telegramApiRoot).hostname]
        : (SUPPORTED_CHANNELS[c.channel]?.hosts ?? []),
    );
  return [...new Set(hosts)].sort();
}

/**
 * Channels OpenClaw has that this platform cannot run, and why (docs/agent-runtime.md, "Channels").
 * Each answers 501 naming the reason rather than a binding that would never connect.
 */
export const UNSUPPORTED_CHANNELS: Record<string, string> = {
  discord: 'Discord needs the OpenClaw plugin @openclaw/discord, which the agent image does not include',
  matrix: 'Matrix needs the OpenClaw plugin @openclaw/matrix, which the agent image does not include',
  msteams: 'Microsoft Teams needs the OpenClaw plugin @openclaw/msteams, which the agent image does not include',
  slack:
    'Slack needs an OpenClaw plugin that cannot be installed here (none is in the npm registry this platform installs from)',
  whatsapp:
    'WhatsApp needs an OpenClaw plugin that cannot be installed here (none is in the npm registry this platform installs from)',
};

export interface ChannelSettings {
  enabled?: boolean;
  dmPolicy?: 'pairing' | 'allowlist' | 'open' | 'disabled';
  allowFrom?: string[];
}

/** A binding with its credentials opened: only the launcher writes them, to files on the agent's state disk. */
export interface OpenedChannel {
  channel: string;
  enabled: boolean;
  settings: ChannelSettings;
  credentials: Record<string, string>;
}

/** What a binding shows its owner: never a credential, at most its last four characters. */
export interface ChannelBinding {
  channel: string;
  enabled: boolean;
  settings: ChannelSettings;
  credentialHint: string;
  updatedAt: Date;
}

// The agent and channel are bound into the ciphertext: sealed credentials moved to another agent's row, or channel, do not open.
const sealContext = (agentId: string, channel: string) => `agent:${agentId}:channel:${channel}`;
const hintOf = (secret: string) => secret.slice(-4);

/** The channel a path names, if the platform runs it; otherwise 501 with why, or 404 for a name OpenClaw does not have. */
export function supportedChannel(channel: string): SupportedChannel {
  const supported = SUPPORTED_CHANNELS[channel];
  if (supported) return supported;
  const why = UNSUPPORTED_CHANNELS[channel];
  throw why ? ChannelErrors.unsupported(why) : ChannelErrors.unknown(channel);
}

/** OpenClaw refuses `dmPolicy: open` without `"*"` in allowFrom, and an allowlist with nobody on it; answered as 400 first. */
function checkSettings(settings: ChannelSettings): void {
  if (settings.dmPolicy === 'open' && !settings.allowFrom?.includes('*'))
    throw ChannelErrors.invalid('dmPolicy "open" needs allowFrom to include "*"');
  if (settings.dmPolicy === 'allowlist' && !settings.allowFrom?.length)
    throw ChannelErrors.invalid('dmPolicy "allowlist" needs at least one sender in allowFrom');
}

const viewOf = (row: {
  channel: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  credential_hint: string;
  updated_at: Date;
}): ChannelBinding => ({
  channel: row.channel,
  enabled: row.enabled,
  settings: row.settings as ChannelSettings,
  credentialHint: row.credential_hint,
  updatedAt: new Date(row.updated_at),
});

/** The agent's bindings as its owner sees them (no credential). */
export async function channelBindings(db: Kysely<Database>, agentId: string): Promise<ChannelBinding[]> {
  const rows = await db
    .selectFrom('agent_channels')
    .select(['channel', 'enabled', 'settings', 'credential_hint', 'updated_at'])
    .where('agent_id', '=', agentId)
    .orderBy('channel')
    .execute();
  return rows.map(viewOf);
}

/**
 * Binds (or rebinds) a channel: credentials given are sealed and replace the stored ones (a
 * rotation); none given keeps the stored ones, and a first binding must give them. Settings
 * replace the stored settings. `agent` is the caller's (looked up through row-level security).
 */
export async function bindChannel(
  db: Kysely<Database>,
  keyring: Keyring,
  agent: { id: string; user_id: string },
  channel: string,
  input: { credentials: Record<string, string | undefined>; settings: ChannelSettings },
): Promise<ChannelBinding> {
  const spec = supportedChannel(channel);
  checkSettings(input.settings);
  const given = spec.credentials.filter((name) => input.credentials[name] !== undefined);
  for (const name of given)
    if (!spec.pattern.test(input.credentials[name]!))
      throw ChannelErrors.invalid(`${name} is not a ${channel} credential`);
  const { enabled = true, ...settings } = input.settings;
  if (given.length === 0) {
    const kept = await db
      .updateTable('agent_channels')
      .set({ enabled, settings, updated_at: sql<Date>`now()` })
      .where('agent_id', '=', agent.id)
      .where('channel', '=', channel)
      .returning(['channel', 'enabled', 'settings', 'credential_hint', 'updated_at'])
      .executeTakeFirst();
    if (!kept) throw ChannelErrors.invalid(`${spec.credentials.join(', ')} is required to connect ${channel}`);
    return viewOf(kept);
  }
  if (given.length !== spec.credentials.length)
    throw ChannelErrors.invalid(`${spec.credentials.join(', ')} are given together`);
  const credentials = Object.fromEntries(spec.credentials.map((name) => [name, input.credentials[name]!]));
  const sealed = keyring.encrypt(JSON.stringify(credentials), sealContext(agent.id, channel));
  const hint = hintOf(credentials[spec.credentials[0]!]!);
  const row = await db
    .insertInto('agent_channels')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      channel,
      enabled,
      credentials_sealed: sealed,
      credential_hint: hint,
      settings,
    })
    .onConflict((c) =>
      c.columns(['agent_id', 'channel']).doUpdateSet({
        enabled,
        credentials_sealed: sealed,
        credential_hint: hint,
        settings,
        updated_at: sql<Date>`now()`,
      }),
    )
    .returning(['channel', 'enabled', 'settings', 'credential_hint', 'updated_at'])
    .executeTakeFirstOrThrow();
  return viewOf(row);
}

/**
 * Keeps the credentials of a channel this platform cannot run yet (POST /api/provision's Discord
 * token): sealed in the vault, switched off, listed with why; connecting it later needs its plugin.
 */
export async function keepChannelCredentials(
  db: Kysely<Database>,
  keyring: Keyring,
  agent: { id: string; user_id: string },
  channel: string,
  credentials: Record<string, string>,
): Promise<void> {
  const main = Object.values(credentials)[0] ?? '';
  await db
    .insertInto('agent_channels')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      channel,
      enabled: false,
      credentials_sealed: keyring.encrypt(JSON.stringify(credentials), sealContext(agent.id, channel)),
      credential_hint: hintOf(main),
      settings: {},
    })
    .execute();
}

/** Disconnects a channel: its sealed credentials go. Whether there was one. */
export async function unbindChannel(db: Kysely<Database>, agentId: string, channel: string): Promise<boolean> {
  if (!SUPPORTED_CHANNELS[channel] && !UNSUPPORTED_CHANNELS[channel]) throw ChannelErrors.unknown(channel);
  const removed = await db
    .deleteFrom('agent_channels')
    .where('agent_id', '=', agentId)
    .where('channel', '=', channel)
    .executeTakeFirst();
  return removed.numDeletedRows > 0n;
}

/** Every binding of the agent with its credentials opened, for the container being built (system connection). */
export async function openedChannels(
  db: Kysely<Database>,
  keyring: Keyring,
  agentId: string,
): Promise<OpenedChannel[]> {
  const rows = await db
    .selectFrom('agent_channels')
    .select(['channel', 'enabled', 'settings', 'credentials_sealed'])
    .where('agent_id', '=', agentId)
    .orderBy('channel')
    .execute();
  return rows.map((row) => ({
    channel: row.channel,
    enabled: row.enabled,
    settings: row.settings as ChannelSettings,
    credentials: JSON.parse(keyring.decrypt(row.credentials_sealed, sealContext(agentId, row.channel))) as Record<
      string,
      string
    >,
  }));
}
