import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { HttpError } from '@agentyard/http';
import { SESSION_COOKIE, sessionCookieOptions } from '@agentyard/identity';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthConfig } from '../config.ts';
import { resolveExternalUser } from '../domain/external-sign-in.ts';
import { githubProvider, googleProvider, type OAuthProvider } from '../domain/oauth-sign-in.ts';
import { inviteTokenHash } from '../domain/invites.ts';
import { OAUTH_BINDING_COOKIE, oauthBindingCookieOptions } from '../domain/oauth-binding-cookie.ts';
import { rememberOAuthFlow, takeOAuthFlow } from '../domain/oauth-states.ts';
import { startSession } from '../domain/sign-in-session.ts';

const loginError = (reason: string) => `/login?error=${encodeURIComponent(reason)}`;

/** The `/login?error=` reason of a refusal by account rules (shared by both providers), else undefined. */
function accountRefusal(failure: unknown): string | undefined {
  if (!(failure instanceof HttpError)) return undefined;
  if (failure.code === 'EXTERNAL_SIGNIN_DISABLED') return 'AccountDisabled';
  if (failure.code === 'EMAIL_NOT_VERIFIED') return 'EmailNotVerified';
  if (failure.code === 'INVITE_REQUIRED') return 'InviteRequired';
  // The invite the flow carried: missing or expired (404), already used (410).
  if (failure.statusCode === 404) return 'InviteNotFound';
  if (failure.statusCode === 410) return 'InviteUsed';
  return undefined;
}

export default async function oauthRoutes(
  app: ServiceApp,
  { config, keyring }: { config: AuthConfig; keyring: Keyring },
) {
  const newAccounts = (inviteHash: string | undefined) => ({
    inviteRequired: config.INVITE_REQUIRED,
    inviteTokenHash: inviteHash,
  });
  const carriedInvite = (query: { inviteToken?: string | undefined }) =>
    query.inviteToken === undefined ? undefined : inviteTokenHash(query.inviteToken);

  /** To the provider's consent page, the flow remembered server-side and bound to this browser. */
  const startSignIn =
    (provider: OAuthProvider) =>
    async (request: FastifyRequest<{ Querystring: { inviteToken?: string } }>, reply: FastifyReply) => {
      if (!provider.configured) return reply.redirect(loginError(provider.reasons.notConfigured), 302);
      const inviteHash = carriedInvite(request.query);
      try {
        const flow = await provider.start();
        const binding = await rememberOAuthFlow(app.db, keyring, provider.name, {
          ...flow,
          inviteTokenHash: inviteHash,
        });
        reply.setCookie(OAUTH_BINDING_COOKIE, binding, oauthBindingCookieOptions(config.PUBLIC_BASE_URL));
        return reply.redirect(flow.url, 302);
      } catch (error) {
        request.log.error({ err: { message: (error as Error).message } }, `${provider.name} sign-in could not start`);
        return reply.redirect(loginError(provider.reasons.error), 302);
      }
    };

  /** Back from the provider: the remembered flow, the identity, the user, a session. */
  const finishSignIn =
    (provider: OAuthProvider) =>
    async (
      request: FastifyRequest<{
        Querystring: Record<string, unknown> & { code?: string; state?: string; error?: string };
      }>,
      reply: FastifyReply,
    ) => {
      const { code, state, error } = request.query;
      const binding = request.cookies[OAUTH_BINDING_COOKIE] || undefined;
      reply.clearCookie(OAUTH_BINDING_COOKIE, oauthBindingCookieOptions(config.PUBLIC_BASE_URL));
      // The provider's answer wins: an `error` never leads to a code exchange.
      if (error)
        return reply.redirect(loginError(error === 'access_denied' ? 'AccessDenied' : provider.reasons.failed), 302);
      if (!provider.configured) return reply.redirect(loginError(provider.reasons.notConfigured), 302);
      if (!code || !state) return reply.redirect(loginError(provider.reasons.failed), 302);
      try {
        const flow = await takeOAuthFlow(app.db, keyring, provider.name, state, binding);
        if (!flow) return reply.redirect(loginError(provider.reasons.failed), 302);
        const identity = await provider.finish({ ...request.query, code, state }, flow.codeVerifier);
        const user = await resolveExternalUser(app.db, keyring, identity, newAccounts(flow.inviteTokenHash));
        const token = await startSession(app.db, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] });
        reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.PUBLIC_BASE_URL));
        return reply.redirect('/dashboard', 302);
      } catch (failure) {
        const reason = provider.failureReason(failure) ?? accountRefusal(failure) ?? provider.reasons.error;
        request.log.warn(
          {
            reason,
            err: { message: ((failure as Error).cause as Error | undefined)?.message ?? (failure as Error).message },
          },
          `${provider.name} sign-in failed`,
        );
        return reply.redirect(loginError(reason), 302);
      }
    };

  const google = googleProvider(config);
  const github = githubProvider(config);
  app.route({
    ...fastifyRoute(signInRoutes.options),
    handler: async () => ({
      google: google.configured,
      github: github.configured,
      inviteRequired: config.INVITE_REQUIRED,
    }),
  });
  for (const [provider, routes] of [
    [google, { start: signInRoutes.google, callback: signInRoutes.googleCallback }],
    [github, { start: signInRoutes.github, callback: signInRoutes.githubCallback }],
  ] as const) {
    app.route({ ...fastifyRoute(routes.start), handler: startSignIn(provider) });
    app.route({ ...fastifyRoute(routes.callback), handler: finishSignIn(provider) });
  }
}
