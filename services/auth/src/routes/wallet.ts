import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { SESSION_COOKIE, sessionCookieOptions } from '@agentyard/identity';
import type { Address } from 'viem';
import { publicHost, type AuthConfig } from '../config.ts';
import { checkTokenGate, createChainClient, tokenGateOf } from '../domain/base-chain.ts';
import { resolveExternalUser } from '../domain/external-sign-in.ts';
import { inviteTokenHash } from '../domain/invites.ts';
import { startSession } from '../domain/sign-in-session.ts';
import { issueNonce, verifyWalletSignIn } from '../domain/wallet-sign-in.ts';

export default async function walletRoutes(
  app: ServiceApp,
  { config, keyring }: { config: AuthConfig; keyring: Keyring },
) {
  const chain = createChainClient(config);
  const gate = tokenGateOf(config);
  const expected = {
    domain: config.SIWE_DOMAIN ?? publicHost(config),
    origin: new URL(config.PUBLIC_BASE_URL).origin,
    chainId: config.BASE_CHAIN_ID,
  };

  app.route({
    ...fastifyRoute(signInRoutes.nonce),
    handler: async () => issueNonce(app.db, config.NONCE_TTL_SECONDS),
  });

  app.route({
    ...fastifyRoute(signInRoutes.walletAuth),
    handler: async (request, reply) => {
      // A malformed invite is refused before the nonce is spent.
      const inviteHash = request.body.inviteToken === undefined ? undefined : inviteTokenHash(request.body.inviteToken);
      const identity = await verifyWalletSignIn(app.db, chain, expected, request.body);
      const user = await resolveExternalUser(app.db, keyring, identity, {
        inviteRequired: config.INVITE_REQUIRED,
        inviteTokenHash: inviteHash,
      });
      const token = await startSession(app.db, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] });
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.PUBLIC_BASE_URL));
      return { ok: true as const, user, address: identity.address };
    },
  });

  app.route({
    ...fastifyRoute(signInRoutes.tokenGateCheck),
    handler: async (request) => checkTokenGate(chain, gate, request.query.address as Address),
  });
  app.route({
    ...fastifyRoute(signInRoutes.tokenGateVerify),
    handler: async (request) => checkTokenGate(chain, gate, request.body.address as Address),
  });
}
