import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { HttpError } from '@agentyard/http';
import { serializeSessionCookie } from '@agentyard/identity';
import type { AuthConfig } from '../config.ts';
import { resolveExternalUser } from '../domain/external-sign-in.ts';
import { GoogleSignIn, GoogleSignInError, type GoogleFailure } from '../domain/google-sign-in.ts';
import { GitHubSignIn, GitHubSignInError } from '../domain/github-sign-in.ts';
import { inviteTokenHash } from '../domain/invites.ts';
import { oauthBindingCookie, readOAuthBinding } from '../domain/oauth-binding-cookie.ts';
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

export default async function oauthRoutes(app: ServiceApp, { config, keyring }: { config: AuthConfig; keyring: Keyring }) {
  const google = new GoogleSignIn(config);
  const github = new GitHubSignIn(config);
  const newAccounts = (inviteHash: string | undefined) => ({ inviteRequired: config.INVITE_REQUIRED, inviteTokenHash: inviteHash });
  const carriedInvite = (query: { inviteToken?: string | undefined }) => query.inviteToken === undefined ? undefined : inviteTokenHash(query.inviteToken);

  app.route({
    ...fastifyRoute(signInRoutes.options),
    handler: async () => ({ google: google.configured, github: github.configured, inviteRequired: config.INVITE_REQUIRED }),
  });

  app.route({
    ...fastifyRoute(signInRoutes.google),
    handler: async (request, reply) => {
      if (!google.configured) return reply.redirect(loginError('GoogleNotConfigured'), 302);
      const inviteHash = carriedInvite(request.query);
      try {
        const flow = await google.start();
        const binding = await rememberOAuthFlow(app.db, keyring, 'google', { ...flow, inviteTokenHash: inviteHash });
        reply.header('set-cookie', oauthBindingCookie(binding, config.PUBLIC_BASE_URL));
        return reply.redirect(flow.url, 302);
      } catch (error) {
        request.log.error({ err: { message: (error as Error).message } }, 'google sign-in could not start');
        return reply.redirect(loginError('GoogleAuthError'), 302);
      }
    },
  });

  app.route({
    ...fastifyRoute(signInRoutes.googleCallback),
    handler: async (request, reply) => {
      const { code, state, error } = request.query;
      const binding = readOAuthBinding(request.headers.cookie);
      reply.header('set-cookie', oauthBindingCookie(null, config.PUBLIC_BASE_URL));
      // The provider's answer wins: an `error` never leads to a code exchange.
      if (error) return reply.redirect(loginError(error === 'access_denied' ? 'AccessDenied' : 'GoogleAuthFailed'), 302);
      if (!google.configured) return reply.redirect(loginError('GoogleNotConfigured'), 302);
      if (!code || !state) return reply.redirect(loginError('GoogleAuthFailed'), 302);
      let reason: string = 'GoogleAuthError' satisfies GoogleFailure;
      try {
        const flow = await takeOAuthFlow(app.db, keyring, 'google', state, binding);
        if (!flow) return reply.redirect(loginError('GoogleAuthFailed'), 302);
        const identity = await google.finish(request.query, state, flow.codeVerifier);
        const user = await resolveExternalUser(app.db, keyring, identity, newAccounts(flow.inviteTokenHash));
        const token = await startSession(app.db, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] });
        reply.header('set-cookie', serializeSessionCookie(token, config.PUBLIC_BASE_URL));
        return reply.redirect('/dashboard', 302);
      } catch (failure) {
        if (failure instanceof GoogleSignInError) reason = failure.reason;
        else reason = accountRefusal(failure) ?? reason;
        request.log.warn({ reason, err: { message: ((failure as Error).cause as Error | undefined)?.message ?? (failure as Error).message } }, 'google sign-in failed');
        return reply.redirect(loginError(reason), 302);
      }
    },
  });

  app.route({
    ...fastifyRoute(signInRoutes.github),
    handler: async (request, reply) => {
      if (!github.configured) return reply.redirect(loginError('GitHubNotConfigured'), 302);
      const inviteHash = carriedInvite(request.query);
      const flow = github.start();
      const binding = await rememberOAuthFlow(app.db, keyring, 'github', { ...flow, inviteTokenHash: inviteHash });
      reply.header('set-cookie', oauthBindingCookie(binding, config.PUBLIC_BASE_URL));
      return reply.redirect(flow.url, 302);
    },
  });

  app.route({
    ...fastifyRoute(signInRoutes.githubCallback),
    handler: async (request, reply) => {
      const { code, state, error } = request.query;
      const binding = readOAuthBinding(request.headers.cookie);
      reply.header('set-cookie', oauthBindingCookie(null, config.PUBLIC_BASE_URL));
      if (error) return reply.redirect(loginError(error === 'access_denied' ? 'AccessDenied' : 'GitHubAuthFailed'), 302);
      if (!github.configured) return reply.redirect(loginError('GitHubNotConfigured'), 302);
      if (!code || !state) return reply.redirect(loginError('GitHubAuthFailed'), 302);
      let reason = 'GitHubAuthError';
      try {
        const flow = await takeOAuthFlow(app.db, keyring, 'github', state, binding);
        if (!flow) return reply.redirect(loginError('GitHubAuthFailed'), 302);
        const identity = await github.finish(code, flow.codeVerifier);
        const user = await resolveExternalUser(app.db, keyring, identity, newAccounts(flow.inviteTokenHash));
        const token = await startSession(app.db, user.id, { ip: request.ip, userAgent: request.headers['user-agent'] });
        reply.header('set-cookie', serializeSessionCookie(token, config.PUBLIC_BASE_URL));
        return reply.redirect('/dashboard', 302);
      } catch (failure) {
        if (failure instanceof GitHubSignInError) reason = failure.reason;
        else reason = accountRefusal(failure) ?? reason;
        request.log.warn({ reason }, 'github sign-in failed');
        return reply.redirect(loginError(reason), 302);
      }
    },
  });
}
