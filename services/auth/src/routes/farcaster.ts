import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Address } from 'viem';
import { publicHost, type AuthConfig } from '../config.ts';
import { checkTokenGate, createChainClient, tokenGateOf } from '../domain/base-chain.ts';
import { FarcasterAuth } from '../domain/farcaster.ts';
import { FarcasterAddresses } from '../domain/farcaster-addresses.ts';
import { SignInErrors } from '../errors.ts';

export default async function farcasterRoutes(app: ServiceApp, { config }: { config: AuthConfig }) {
  const farcaster = new FarcasterAuth({
    issuer: config.FARCASTER_ISSUER,
    jwksUrl: config.FARCASTER_JWKS_URL ?? `${config.FARCASTER_ISSUER.replace(/\/$/, '')}/.well-known/jwks.json`,
    audience: config.FARCASTER_AUDIENCE ?? publicHost(config),
    sessionSecret: config.FARCASTER_SESSION_SECRET ?? config.SESSION_SECRET,
    sessionTtlSeconds: config.FARCASTER_SESSION_TTL_SECONDS,
    refreshWindowSeconds: config.FARCASTER_REFRESH_WINDOW_SECONDS,
    timeoutMs: config.OAUTH_TIMEOUT_MS,
  });
  const chain = createChainClient(config);
  const boundAddresses = new FarcasterAddresses({
    rpcUrl: config.FARCASTER_RPC_URL,
    idRegistry: config.FARCASTER_ID_REGISTRY_ADDRESS as Address,
    hubUrl: config.FARCASTER_HUB_URL,
    timeoutMs: config.RPC_TIMEOUT_MS,
  });
  const gate = tokenGateOf(config);
  const metadata = () => ({
    issuer: farcaster.settings.issuer,
    audience: farcaster.settings.audience,
    sessionTtlSeconds: farcaster.settings.sessionTtlSeconds,
    refreshWindowSeconds: farcaster.settings.refreshWindowSeconds,
    tokenGating: gate !== null,
  });

  app.route({
    ...fastifyRoute(signInRoutes.farcasterVerify),
    handler: async (request) => {
      const fid = await farcaster.verifyIdentityToken(request.body.token);
      if (request.body.tokenGate) {
        if (!request.body.address) throw SignInErrors.addressRequired();
        if (!gate) throw SignInErrors.tokenGateNotConfigured();
        // Someone else's well-funded wallet must not open the gate: only an address of this fid counts.
        if (!(await boundAddresses.isBound(fid, request.body.address as Address))) throw SignInErrors.addressNotBound();
        await checkTokenGate(chain, gate, request.body.address as Address);
      }
      return farcaster.issueSession(fid);
    },
  });
  app.route({ ...fastifyRoute(signInRoutes.farcasterVerifyMetadata), handler: async () => metadata() });
  app.route({
    ...fastifyRoute(signInRoutes.farcasterRefresh),
    handler: async (request) => farcaster.refreshSession(request.body.sessionToken),
  });
  app.route({ ...fastifyRoute(signInRoutes.farcasterRefreshMetadata), handler: async () => metadata() });
}
