import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import { hashToken } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { ServiceApp } from '@agentyard/http';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import type { FastifyRequest } from 'fastify';
import { SECURITY_EVENT_KINDS, type SecurityEventVerifier } from '../../domain/security-events.ts';
import { recordSecurityEvent, type MatchBy } from '../../domain/privileged/security-events.ts';
import { SECURITY_EVENT_JOB } from '../../domain/job-names.ts';

export interface SecurityEventJob {
  jti: string;
}

/** Security event receivers: the token arrives as the raw body (application/secevent+jwt). */
export default async function securityEventRoutes(
  app: ServiceApp,
  { verifier, systemDb, queues }: { verifier: SecurityEventVerifier; systemDb: SystemDb; queues: QueueSet },
) {
  app.addContentTypeParser(
    ['application/secevent+jwt', 'application/jwt'],
    { parseAs: 'string' },
    (_request, body, done) => done(null, (body as string).trim()),
  );

  const receive =
    (matchBy: MatchBy) => async (request: FastifyRequest<{ Body: string }>, reply: import('fastify').FastifyReply) => {
      const token = await verifier.verify(request.body);
      await queues.available();
      if (await recordSecurityEvent(systemDb, token, matchBy)) {
        // Only the jti travels: the worker reads the event from risc_events.
        await queues.add(QUEUES.securityEvents, SECURITY_EVENT_JOB, { jti: token.jti } satisfies SecurityEventJob, {
          jobId: `risc-${hashToken(token.jti).slice(0, 40)}`,
        });
      }
      return reply.code(202).send();
    };

  app.route({ ...fastifyRoute(signInRoutes.securityEvent), handler: receive('subject-or-email') });
  app.route({ ...fastifyRoute(signInRoutes.legacySecurityEvent), handler: receive('email') });
  app.route({
    ...fastifyRoute(signInRoutes.securityEventStatus),
    handler: async () => ({
      status: verifier.configured ? ('ok' as const) : ('not_configured' as const),
      supportedEvents: Object.values(SECURITY_EVENT_KINDS),
    }),
  });
}
