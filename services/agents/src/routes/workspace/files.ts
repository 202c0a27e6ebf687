import { Readable } from 'node:stream';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, agentWorkspaceRoutes as spec, workspaceLimitsOf } from '@agentyard/proto-schemas';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { WorkspaceAdmission } from '../../domain/runtime/workspace-admission.ts';
import { onWorkspace, workspaceOfAgent } from '../../domain/workspace/workspace-files.ts';
import { getAgent } from '../../domain/agents/agents.ts';
import { planCaller, planOf } from '../../domain/agents/plan-limits.ts';

const UPLOADS = 'uploads';
const wantsDownload = (flag: string | undefined) => flag === '1' || flag === 'true';
/** A header-safe file name: what is not printable ASCII goes to the RFC 5987 form. */
const attachment = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

/** Files live on the agent's state disk, reachable while it hibernates: a file operation counts as activity without waking it. */
export default async function fileRoutes(
  app: ServiceApp,
  {
    driver,
    admission,
    activeStatuses,
    activity,
  }: {
    driver: RuntimeDriver;
    admission: WorkspaceAdmission;
    activeStatuses: readonly string[];
    activity: { touch(agentId: string): Promise<void> };
  },
) {
  const workspaceOf = (agentId: string) => {
    void activity.touch(agentId);
    return workspaceOfAgent(driver, agentId, admission.ledger(agentId));
  };
  app.route({
    ...fastifyRoute(spec.listFiles),
    handler: async (request, reply) => {
      const agent = await request.asUser((trx) => getAgent(trx, request.query.agentId));
      const workspace = workspaceOf(agent.id);
      if (wantsDownload(request.query.download)) {
        const file = await onWorkspace(() => workspace.read(request.query.path ?? ''));
        // Opaque bytes, an attachment, never sniffed: a file the agent wrote must not run as script or a page on the console's origin.
        return reply
          .header('content-type', 'application/octet-stream')
          .header('content-length', file.size)
          .header('content-disposition', attachment(file.name))
          .header('x-content-type-options', 'nosniff')
          .send(file.stream as never);
      }
      const listed = await onWorkspace(async () => {
        // The uploads folder is where files go by default: it exists once anyone looks.
        if (request.query.path === undefined) await workspace.ensureFolder(UPLOADS);
        return workspace.list(request.query.path ?? UPLOADS);
      });
      return { agentId: agent.id, ...listed };
    },
  });

  app.route({
    ...fastifyRoute(spec.deleteFile),
    handler: async (request) => {
      const agent = await request.asUser((trx) => getAgent(trx, request.query.agentId));
      const removed = await onWorkspace(() => workspaceOf(agent.id).remove(request.query.path));
      return { deleted: true as const, agentId: agent.id, path: removed.path };
    },
  });

  // Uploads read the body as it arrives, whatever its type: nothing parses or buffers it.
  await app.register(async (uploads: ServiceApp) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    uploads.route({
      ...fastifyRoute(spec.uploadFile),
      handler: async (request, reply) => {
        const { agent, plan } = await request.asUser(async (trx) => ({
          agent: await getAgent(trx, request.query.agentId),
          plan: await planOf(trx, planCaller(request.identity, activeStatuses)),
        }));
        const limits = workspaceLimitsOf(request.identity.admin ? 'network' : (plan ?? 'free'));
        const body = (request.body as Readable | undefined) ?? Readable.from([]);
        // The length the caller announced is what the upload reserves of the workspace (else up to the per-file limit).
        const declared = Number(request.headers['content-length']);
        const written = await onWorkspace(() =>
          workspaceOf(agent.id).write(
            request.query.path,
            body,
            limits,
            Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
          ),
        );
        return reply.code(201).send({
          agentId: agent.id,
          path: written.path,
          size: written.size,
          usedBytes: written.usedBytes,
          limitBytes: limits.totalBytes,
        });
      },
    });
  });
}
