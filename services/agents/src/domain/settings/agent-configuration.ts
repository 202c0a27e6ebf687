import { randomBytes } from 'node:crypto';
import { sql, type UserTx } from '@agentyard/db';
import { AgentErrors } from '../../errors.ts';
import { getAgent } from '../agents/agents.ts';
import { agentConfigView, checkAgentConfig, checkAgentPolicy } from '../agents/agent-config.ts';
import { configAt, defaultAgentConfig, isObject, mergedConfig, type AgentConfig } from '../agents/config-document.ts';
import { checkSkillLimit, type PlanCaller } from '../agents/plan-limits.ts';
import { gatewayModelId } from '../agents/plans.ts';
import type { AgentRow } from '../agents/agent-views.ts';
import { buildAgentGatewayConfig } from '../gateway/gateway-config.ts';
import { reloadKindOf, watchesItsConfig } from '../gateway/config-reload.ts';
import { OpenClawValidatorError, type OpenClawValidator } from '../gateway/openclaw-validation.ts';

/** How many previous configurations an agent keeps. */
export const AGENT_BACKUPS_KEPT = 10;

/** In answers and checks, the platform's secrets of an agent (never read here) stand as this. */
export const PLATFORM_SECRET = '<set by the platform>';

/** What a gateway's openclaw.json is built from besides the agent (its settings, not a user's). */
export interface GatewaySettings {
  aiGatewayUrl: string;
  consoleOrigin: string;
  /** The image an agent without one of its own runs. */
  defaultImage: string;
  /** Whether the runtime can replace a running container's config file (not on a remote engine, whose configs are copied in). */
  replacesConfigInPlace: boolean;
}

/** The common fields of a change, each set on the document at its OpenClaw path. */
export interface ConfigChange {
  config?: AgentConfig;
  model?: string;
  logLevel?: string;
  channels?: { telegram?: boolean; discord?: boolean };
  resetTriggers?: string[];
  dmPolicy?: string;
}

export type ConfigApplied = 'hot-reload' | 'restart' | 'next-start';

/** A change checked by the platform's rules, ready for OpenClaw's check and then the save. */
export interface PreparedChange {
  agent: AgentRow;
  config: AgentConfig;
  model: string;
  /** The openclaw.json the agent's gateway would get (secrets as PLATFORM_SECRET). */
  gatewayConfig: Record<string, unknown>;
  restoredFrom?: string;
}

function withCommonFields(document: AgentConfig, change: ConfigChange): AgentConfig {
  const settings: [string, unknown][] = [
    ['logging.level', change.logLevel],
    ['channels.telegram.enabled', change.channels?.telegram],
    ['channels.discord.enabled', change.channels?.discord],
    ['session.resetTriggers', change.resetTriggers],
    ['channels.telegram.dmPolicy', change.dmPolicy],
  ];
  return settings
    .filter(([, value]) => value !== undefined)
    .reduce((config, [path, value]) => mergedConfig(config, configAt(path, value)), document);
}

/** The openclaw.json the platform gives the agent's gateway for `config` and `model`, its secrets left out. */
export function gatewayConfigOf(
  agent: Pick<AgentRow, 'id' | 'tools_profile'>,
  config: AgentConfig,
  model: string,
  settings: GatewaySettings,
): Record<string, unknown> {
  return buildAgentGatewayConfig({
    agentId: agent.id,
    modelId: gatewayModelId(model),
    toolsProfile: agent.tools_profile,
    gatewayToken: PLATFORM_SECRET,
    hooksToken: PLATFORM_SECRET,
    aiKey: PLATFORM_SECRET,
    aiGatewayUrl: settings.aiGatewayUrl,
    consoleOrigin: settings.consoleOrigin,
    userConfig: config,
  });
}

export async function listAgentBackups(trx: UserTx, agentId: string) {
  const rows = await trx
    .selectFrom('agent_config_backups')
    .select(['id', 'created_at', 'model'])
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(AGENT_BACKUPS_KEPT)
    .execute();
  return rows.map((row) => ({ id: row.id, timestamp: row.created_at.toISOString(), model: row.model }));
}

/** The agent's configuration as its owner sees it, with what its gateway is given and its backups (404 when not theirs). */
export async function agentConfiguration(
  trx: UserTx,
  agentId: string,
  settings: GatewaySettings,
  validator: OpenClawValidator,
) {
  const agent = await getAgent(trx, agentId);
  const view = agentConfigView(agent);
  return {
    ...view,
    model: agent.model,
    appliedConfig: gatewayConfigOf(agent, agent.config, agent.model, settings),
    checkedBy: validator.checkedBy,
    backups: await listAgentBackups(trx, agentId),
  };
}

/**
 * A change checked by the platform's own rules (keys it writes itself, tools profile fixed at
 * creation, the plan's skills), 400 naming the key, 404 when not the owner's. Without a whole
 * document the fields are set on the agent's current one (its plan's defaults when it has none).
 */
export async function prepareConfigChange(
  trx: UserTx,
  caller: PlanCaller,
  agentId: string,
  change: ConfigChange,
  settings: GatewaySettings,
): Promise<PreparedChange> {
  const agent = await getAgent(trx, agentId);
  const current = Object.keys(agent.config).length > 0 ? agent.config : defaultAgentConfig(agent.plan);
  const config = withCommonFields(change.config ?? current, change);
  checkAgentPolicy(agent, config);
  await checkSkillLimit(trx, caller, config);
  const model = change.model ?? agent.model;
  return { agent, config, model, gatewayConfig: gatewayConfigOf(agent, config, model, settings) };
}

/** Sections the platform keeps from the interface's defaults that no channel of the image reads (OpenClaw would refuse them: see gateway-config.ts). */
const KEPT_FOR_THE_PLATFORM = ['whatsapp', 'webchat'];

/** What OpenClaw checks: the agent's file with the whole document set on it (every key it has, carried or not), less the platform-kept sections. */
function openClawDocumentOf(prepared: PreparedChange): Record<string, unknown> {
  const { channels, ...rest } = prepared.config;
  const ownChannels = isObject(channels)
    ? Object.fromEntries(Object.entries(channels).filter(([name]) => !KEPT_FOR_THE_PLATFORM.includes(name)))
    : channels;
  return mergedConfig(prepared.gatewayConfig, channels === undefined ? rest : { ...rest, channels: ownChannels });
}

/**
 * The installed OpenClaw's verdict on the change (400 naming the first path it refuses, in its own
 * words), then the platform's list of the keys it keeps; nothing is saved on a refusal. Returns
 * which OpenClaw checked it (null: none is installed here, the platform's rules alone did).
 */
export async function checkWithOpenClaw(
  validator: OpenClawValidator,
  prepared: PreparedChange,
  log: { error(obj: object, msg: string): void },
): Promise<string | null> {
  const verdict = await validator.validate(openClawDocumentOf(prepared)).catch((error) => {
    if (!(error instanceof OpenClawValidatorError)) throw error;
    log.error(
      { agentId: prepared.agent.id, err: { message: error.message } },
      'OpenClaw could not check a configuration',
    );
    throw AgentErrors.configCheckUnavailable();
  });
  const [first] = verdict.issues;
  if (first) throw AgentErrors.invalidConfig(`Invalid config: ${first.path || 'config'}: ${first.message}`);
  checkAgentConfig(prepared.agent, prepared.config);
  return verdict.checkedBy;
}

/** A restore is the change back to a backup's configuration and model (404 when not one of this agent's). */
export async function prepareRestore(
  trx: UserTx,
  caller: PlanCaller,
  agentId: string,
  backupId: string,
  settings: GatewaySettings,
): Promise<PreparedChange> {
  await getAgent(trx, agentId);
  const backup = await trx
    .selectFrom('agent_config_backups')
    .select(['config', 'model'])
    .where('agent_id', '=', agentId)
    .where('id', '=', backupId)
    .executeTakeFirst();
  if (!backup) throw AgentErrors.configBackupNotFound();
  return {
    ...(await prepareConfigChange(trx, caller, agentId, { config: backup.config, model: backup.model }, settings)),
    restoredFrom: backupId,
  };
}

const newBackupId = () => `acb_${randomBytes(12).toString('base64url')}`;

/** How the saved configuration reaches the agent: in place where its running gateway watches its config and OpenClaw's rules allow, else a rebuild. */
function appliedBy(before: AgentRow, after: AgentRow, settings: GatewaySettings): ConfigApplied {
  if (!after.container_id || !['running', 'active'].includes(after.status)) return 'next-start';
  if (!settings.replacesConfigInPlace || !watchesItsConfig(after.image ?? settings.defaultImage)) return 'restart';
  return reloadKindOf(
    gatewayConfigOf(before, before.config, before.model, settings),
    gatewayConfigOf(after, after.config, after.model, settings),
  );
}

/**
 * Backs up the agent's configuration and model, then saves the prepared ones (saves of one agent
 * one at a time: the lock ends with the transaction), keeping the newest AGENT_BACKUPS_KEPT backups.
 */
export async function saveConfigChange(trx: UserTx, prepared: PreparedChange, settings: GatewaySettings) {
  const agentId = prepared.agent.id;
  await sql`select pg_advisory_xact_lock(hashtext('agent-config'), hashtext(${agentId}))`.execute(trx);
  const before = await getAgent(trx, agentId);
  const backupId = newBackupId();
  await trx
    .insertInto('agent_config_backups')
    .values({ id: backupId, agent_id: agentId, user_id: before.user_id, config: before.config, model: before.model })
    .execute();
  await trx
    .deleteFrom('agent_config_backups')
    .where('agent_id', '=', agentId)
    .where('id', 'not in', (qb) =>
      qb
        .selectFrom('agent_config_backups')
        .select('id')
        .where('agent_id', '=', agentId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(AGENT_BACKUPS_KEPT),
    )
    .execute();
  const after = await trx
    .updateTable('agents')
    .set({ config: prepared.config, model: prepared.model, updated_at: sql<Date>`now()` })
    .where('id', '=', agentId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return {
    row: after,
    applied: appliedBy(before, after, settings),
    backupId,
    backups: await listAgentBackups(trx, agentId),
  };
}
