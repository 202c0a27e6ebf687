import type { FastifyRequest } from 'fastify';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { Database, Kysely } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import {
  agentVerification,
  clearVerification,
  recordVerification,
  webVerification,
  type VerificationInput,
} from '../../domain/agents/verification.ts';
import type { AgentRouteDeps } from './deps.ts';

/**
 * Agent verification (`eas`, `coinbase`, `ens`, `webauthn`), owner only. The web records a
 * verification the platform vouches for (verified, its verifier address, who and when); backend
 * callers report an outcome they established themselves.
 */
export default async function verificationRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  /** Runs `work` as the caller: in the web user's row-level-security transaction, or on the system connection scoped to x-user-id. */
  const asCaller = <T>(
    request: FastifyRequest,
    work: (db: Kysely<Database>, ownerId: string | null) => Promise<T>,
  ): Promise<T> =>
    request.identity.surface === 'web'
      ? request.asUser((trx) => work(trx, request.identity.userId))
      : work(context.db, request.identity.userId);

  for (const route of [spec.verification, spec.verifyStatus]) {
    app.route({
      ...fastifyRoute(route),
      handler: async (request: FastifyRequest) => {
        const { id } = request.params as { id: string };
        return asCaller(request, (db, ownerId) => agentVerification(db, id, ownerId));
      },
    } as never);
  }

  app.route({
    ...fastifyRoute(spec.verify),
    handler: async (request) => {
      const { verificationType, verified, verifierAddress, attestationUid, metadata } = request.body;
      const input: VerificationInput =
        request.identity.surface === 'web'
          ? webVerification(verificationType, request.identity.userId!, config.AGENT_VERIFIER_ADDRESS)
          : {
              verificationType,
              verified: verified ?? true,
              verifierAddress: verifierAddress ?? null,
              attestationUid: attestationUid ?? null,
              metadata: metadata ?? null,
            };
      const verification = await asCaller(request, (db, ownerId) =>
        recordVerification(db, request.params.id, ownerId, input),
      );
      return { success: true as const, verification };
    },
  });

  app.route({
    ...fastifyRoute(spec.unverify),
    handler: async (request) => {
      const verification = await asCaller(request, (db, ownerId) => clearVerification(db, request.params.id, ownerId));
      return { success: true as const, verification };
    },
  });
}
