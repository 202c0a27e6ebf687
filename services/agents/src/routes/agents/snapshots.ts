import type { FastifyRequest } from 'fastify';
import type { Database, Kysely } from '@agentyard/db';

import type { ServiceApp } from '@agentyard/http';
import {
  agentSnapshotRoutes as spec,
  fastifyRoute,
  snapshotLimitsOf,
  workspaceLimitsOf,
} from '@agentyard/proto-schemas';
import { Readable } from 'node:stream';
import { planCaller, planOf } from '../../domain/agents/plan-limits.ts';
import { activeStatusesOf } from '@agentyard/db';
import { createProvisioningAgent, getAgent } from '../../domain/agents/agents.ts';
import { provisionedAgent, type AgentRow } from '../../domain/agents/agent-views.ts';
import { withChannelsOff } from '../../domain/agents/config-document.ts';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import {
  deleteSnapshotRecord,
  enqueueSnapshot,
  listSnapshots,
  readySnapshot,
  recordSnapshot,
  snapshotBytesOf,
  snapshotView,
} from '../../domain/runtime/snapshots.ts';
import { SnapshotErrors } from '../../errors.ts';
import type { AgentRouteDeps } from './deps.ts';

/** Runs `work` on the caller's agent `id` with the connection that may read its snapshots. */
const asOwner = <T>(
  context: AgentRouteDeps['context'],
  request: FastifyRequest,
  id: string,
  work: (db: Kysely<Database>, agent: AgentRow) => Promise<T>,
): Promise<T> =>
  request.identity.surface === 'web'
    ? request.asUser(async (trx) => work(trx, await getAgent(trx, id)))
    : scopedAgents(context.db, request.identity.userId)
        .get(id)
        .then((agent) => work(context.db, agent));

/** 429 once the owner's snapshots take what the agent's plan allows (a snapshot's size is known only once taken). */
const withinQuota = async (db: Kysely<Database>, agent: AgentRow) => {
  const { quotaBytes } = snapshotLimitsOf(agent.plan);
  const used = await snapshotBytesOf(db, agent.user_id);
  if (used >= quotaBytes) throw SnapshotErrors.quotaReached(used, quotaBytes);
};

/** Taking a snapshot (queued), and the snapshots listed, deleted and downloaded. */
function snapshotArchiveRoutes(app: ServiceApp, { context, queues }: AgentRouteDeps) {
  app.route({
    ...fastifyRoute(spec.takeSnapshot),
    handler: async (request, reply) => {
      await queues.available();
      const row = await asOwner(context, request, request.params.id, async (db, agent) => {
        await withinQuota(db, agent);
        return recordSnapshot(db, agent, 'manual', request.body?.label ?? null);
      });
      try {
        await enqueueSnapshot(queues, row.id);
      } catch (error) {
        // Without its job the snapshot would stay pending for ever.
        await asOwner(context, request, request.params.id, (db) => deleteSnapshotRecord(db, request.params.id, row.id));
        throw error;
      }
      return reply.code(202).send({ snapshot: { id: row.id, status: 'pending' as const } });
    },
  });

  app.route({
    ...fastifyRoute(spec.listSnapshots),
    handler: async (request) =>
      asOwner(context, request, request.params.id, async (db, agent) => ({
        snapshots: (await listSnapshots(db, agent.id)).map(snapshotView),
        quota: { usedBytes: await snapshotBytesOf(db, agent.user_id), ...snapshotLimitsOf(agent.plan) },
      })),
  });

  app.route({
    ...fastifyRoute(spec.deleteSnapshot),
    handler: async (request) => {
      const { id, snapshotId } = request.params;
      await asOwner(context, request, id, (db) => deleteSnapshotRecord(db, id, snapshotId));
      await context.snapshotStore.remove(snapshotId);
      return { deleted: true as const, id: snapshotId };
    },
  });

  app.route({
    ...fastifyRoute(spec.downloadSnapshot),
    handler: async (request, reply) => {
      const { id, snapshotId } = request.params;
      const row = await asOwner(context, request, id, (db) => readySnapshot(db, id, snapshotId));
      const archive = await context.snapshotStore.open(row.id);
      if (!archive) throw SnapshotErrors.notReady();
      return reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="agent-${id}-snapshot-${row.id}.tar.gz"`)
        .header('x-content-type-options', 'nosniff')
        .header('content-length', row.size_bytes ?? undefined)
        .send(archive as never);
    },
  });
}

/** An agent brought back to a snapshot of its own, or a new agent cloned from one. */
function restoreAndCloneRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  app.route({
    ...fastifyRoute(spec.restoreSnapshot),
    handler: async (request) => {
      const { id } = request.params;
      await asOwner(context, request, id, (db) => readySnapshot(db, id, request.body.snapshotId));
      const restored = await context.snapshots.restore(id, request.body.snapshotId);
      // A running agent was rebuilt on it in the restore's turn; a stopped one gets its restored configuration now.
      if (!restored.wasRunning) await context.runtime.applyConfig(id);
      const row = await context.runtime.load(id);
      return {
        success: true as const,
        id,
        snapshotId: request.body.snapshotId,
        beforeRestoreSnapshotId: restored.beforeRestoreSnapshotId,
        status: row?.status ?? 'deleted',
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.cloneAgent),
    handler: async (request, reply) => {
      const { id } = request.params;
      const { userId, admin } = request.identity;
      const source = await request.asUser((trx) => getAgent(trx, id));
      await queues.available();
      await context.allowance.admitNew({ userId: userId!, admin }, source.tier ?? undefined);
      const snapshot = request.body.snapshotId
        ? await request.asUser((trx) => readySnapshot(trx, id, request.body.snapshotId!))
        : await context.snapshots.snapshotNow(id, 'manual', `clone: ${request.body.name}`.slice(0, 100));
      const clone = await context.snapshots.clone(snapshot, queues, (cloneId) =>
        request.asUser((trx) =>
          createProvisioningAgent(trx, {
            userId: userId!,
            admin,
            activeStatuses,
            name: request.body.name,
            model: source.model,
            tier: source.tier ?? undefined,
            config: withChannelsOff(source.config),
            userDefaults: false,
            defaultProvider: config.AGENT_DEFAULT_PROVIDER,
            adminAgentLimit: config.ADMIN_AGENT_LIMIT,
            clone: { id: cloneId, sourceAgentId: source.id, snapshotId: snapshot.id },
          }),
        ),
      );
      return reply.code(201).send({
        success: true as const,
        agent: provisionedAgent(clone, config.AGENT_PUBLIC_URL),
        snapshotId: snapshot.id,
      });
    },
  });
}

/** An uploaded archive kept as a snapshot; the body is read as it arrives, whatever its type: nothing parses or buffers it. */
async function importRoute(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  await app.register(async (imports: ServiceApp) => {
    imports.removeAllContentTypeParsers();
    imports.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    imports.route({
      ...fastifyRoute(spec.importSnapshot),
      handler: async (request, reply) => {
        const { id } = request.params;
        const { row, plan } = await request.asUser(async (trx) => {
          const agent = await getAgent(trx, id);
          await withinQuota(trx, agent);
          return {
            row: await recordSnapshot(trx, agent, 'import'),
            plan: await planOf(trx, planCaller(request.identity, activeStatuses)),
          };
        });
        const limit = workspaceLimitsOf(request.identity.admin ? 'network' : (plan ?? 'free')).totalBytes;
        const declared = Number(request.headers['content-length']);
        const body = (request.body as Readable | undefined) ?? Readable.from([]);
        if (Number.isSafeInteger(declared) && declared > limit) {
          await request.asUser((trx) => deleteSnapshotRecord(trx, id, row.id));
          throw SnapshotErrors.tooLarge(limit);
        }
        const imported = await context.snapshots.importArchive(row, body, limit);
        return reply.code(201).send({ snapshot: snapshotView(imported) });
      },
    });
  });
}

/**
 * An agent's snapshots (issue 30): take, list, delete, download, restore. The owner's only: on the
 * web through row-level security, on the backend scoped to the caller's x-user-id; anyone else's
 * agent (or snapshot) is 404.
 */
export default async function snapshotRoutes(app: ServiceApp, deps: AgentRouteDeps) {
  snapshotArchiveRoutes(app, deps);
  restoreAndCloneRoutes(app, deps);
  await importRoute(app, deps);
}
