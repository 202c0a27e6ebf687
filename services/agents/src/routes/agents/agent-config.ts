import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentConfigView } from '../../domain/agents/agent-config.ts';
import { planCaller } from '../../domain/agents/plan-limits.ts';
import { OPENCLAW_VERSION } from '../../domain/gateway/config-reload.ts';
import { openClawValidator } from '../../domain/gateway/openclaw-validation.ts';
import { enqueueConfigApply } from '../../domain/runtime/config-apply.ts';
import {
  agentConfiguration,
  checkWithOpenClaw,
  listAgentBackups,
  prepareConfigChange,
  prepareRestore,
  saveConfigChange,
  type GatewaySettings,
  type PreparedChange,
} from '../../domain/settings/agent-configuration.ts';
import { configFrom } from '../settings/config.ts';
import type { AgentRouteDeps } from './deps.ts';

/**
 * One agent's configuration (docs/agent-runtime.md), its owner only: read, changed (checked by the platform's
 * rules, then by the installed OpenClaw's own validator, outside any transaction: it takes seconds),
 * backed up, restored; a save reaches the agent by a lifecycle job, in place or by a rebuild.
 */
export default async function agentConfigRoutes(
  app: ServiceApp,
  { config: settings, context, queues }: AgentRouteDeps,
) {
  const activeStatuses = activeStatusesOf(settings.SUBSCRIPTION_ACTIVE_STATUSES);
  const gateway: GatewaySettings = {
    aiGatewayUrl: settings.AGENT_AI_GATEWAY_URL,
    consoleOrigin: new URL(settings.PUBLIC_BASE_URL).origin,
    defaultImage: context.driver.defaultImage,
    replacesConfigInPlace: context.driver.kind === 'process' || settings.RUNTIME_CONFIG_DIR !== '-',
  };
  const validator = openClawValidator({
    entry: settings.OPENCLAW_CONFIG_VALIDATOR === '-' ? '' : settings.OPENCLAW_CONFIG_VALIDATOR || OPENCLAW_ENTRY,
    version: OPENCLAW_VERSION,
    timeoutMs: settings.OPENCLAW_VALIDATE_TIMEOUT_MS,
  });

  /** OpenClaw's check, the save and its apply job: what a change and a restore share. */
  async function save(request: FastifyRequest, prepared: PreparedChange) {
    const checkedBy = await checkWithOpenClaw(validator, prepared, request.log);
    await queues.available();
    const saved = await request.asUser((trx) => saveConfigChange(trx, prepared, gateway));
    await enqueueConfigApply(
      queues,
      saved.row.id,
      saved.row.updated_at,
      saved.applied === 'hot-reload' ? 'hot-reload' : 'restart',
    );
    return {
      success: true as const,
      agentId: saved.row.id,
      // As GET shows it: the tools profile fixed at creation included.
      config: agentConfigView(saved.row).config,
      model: saved.row.model,
      updatedAt: new Date(saved.row.updated_at).toISOString(),
      applied: saved.applied,
      checkedBy,
      backupId: saved.backupId,
      ...(prepared.restoredFrom ? { restoredFrom: prepared.restoredFrom } : {}),
      backups: saved.backups,
    };
  }

  app.route({
    ...fastifyRoute(spec.config),
    handler: async (request) => request.asUser((trx) => agentConfiguration(trx, request.params.id, gateway, validator)),
  });

  app.route({
    ...fastifyRoute(spec.saveConfig),
    handler: async (request) => {
      const { config, ...fields } = request.body;
      const caller = planCaller(request.identity, activeStatuses);
      const prepared = await request.asUser(async (trx) => {
        await getAgent(trx, request.params.id); // not owned comes before the body is looked at
        if (config === undefined && Object.keys(fields).length === 0) configFrom(undefined);
        const change = { ...fields, ...(config === undefined ? {} : { config: configFrom(config) }) };
        return prepareConfigChange(trx, caller, request.params.id, change, gateway);
      });
      return save(request, prepared);
    },
  });

  app.route({
    ...fastifyRoute(spec.configBackups),
    handler: async (request) =>
      request.asUser(async (trx) => {
        await getAgent(trx, request.params.id);
        return { backups: await listAgentBackups(trx, request.params.id) };
      }),
  });

  app.route({
    ...fastifyRoute(spec.restoreConfig),
    handler: async (request) => {
      const caller = planCaller(request.identity, activeStatuses);
      return save(
        request,
        await request.asUser((trx) => prepareRestore(trx, caller, request.params.id, request.body.backupId, gateway)),
      );
    },
  });
}
