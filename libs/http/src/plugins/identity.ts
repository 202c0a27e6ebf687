import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IDENTITY_HEADER, verifyIdentity, type Identity } from '@agentyard/identity';
import type { RouteAuth } from '@agentyard/proto-schemas';
import { HttpError } from '../errors.ts';

// Who may call a route (RouteAuth, on its spec) is checked after the signed identity header:
// `none` any caller the edge forwarded; `user` a signed-in user (session or user key);
// `admin` a signed-in admin; `service` a backend caller holding the internal API key;
// `user-or-service` either of the last two.

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
  interface FastifyContextConfig {
    /** Defaults to `user`: a route is private unless it says otherwise. */
    auth?: RouteAuth;
  }
}

const unauthorized = () => new HttpError(401, 'Unauthorized');

function isUser(identity: Identity): boolean {
  return identity.userId !== null && (identity.auth === 'session' || identity.auth === 'user-key');
}

export function authorize(identity: Identity, auth: RouteAuth): void {
  switch (auth) {
    case 'none':
      return;
    case 'user':
      if (!isUser(identity)) throw unauthorized();
      return;
    case 'admin':
      if (!isUser(identity)) throw unauthorized();
      if (!identity.admin) throw new HttpError(403, 'Admin access required', 'ADMIN_REQUIRED');
      return;
    case 'service':
      if (identity.auth !== 'service') throw unauthorized();
      return;
    case 'user-or-service':
      if (identity.auth !== 'service' && !isUser(identity)) throw unauthorized();
      return;
  }
}

/** Every request must carry a valid identity header signed by the edge; routes then check `config.auth`. */
export default fp(
  async function identityPlugin(app: FastifyInstance, options: { secret: string }) {
    app.decorateRequest('identity', null as unknown as Identity);
    app.addHook('onRequest', async (request: FastifyRequest) => {
      const identity = verifyIdentity(request.headers[IDENTITY_HEADER] as string | undefined, options.secret);
      if (!identity) throw unauthorized();
      request.identity = identity;
      authorize(identity, request.routeOptions.config?.auth ?? 'user');
    });
  },
  { name: 'agentyard-identity' },
);
