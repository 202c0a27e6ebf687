import * as oidc from 'openid-client';
import type { AuthConfig } from '../config.ts';
import type { ExternalIdentity } from './external-sign-in.ts';

/** Where a failed Google sign-in sends the browser: `/login?error=<reason>`. */
export type GoogleFailure =
  | 'AccessDenied'
  | 'GoogleAuthFailed'
  | 'GoogleNotConfigured'
  | 'GoogleTokenFailed'
  | 'GoogleNoEmail'
  | 'GoogleEmailNotVerified'
  | 'GoogleAuthError';

export class GoogleSignInError extends Error {
  readonly reason: GoogleFailure;
  constructor(reason: GoogleFailure, options?: { cause?: unknown }) {
    super(reason, options);
    this.reason = reason;
  }
}

export const GOOGLE_SCOPES = 'openid email profile';

/** Google (or any OpenID provider at GOOGLE_ISSUER) as an OAuth client with PKCE. */
export class GoogleSignIn {
  readonly redirectUri: string;
  #config: AuthConfig;
  #discovered: Promise<oidc.Configuration> | undefined;

  constructor(config: AuthConfig) {
    this.#config = config;
    this.redirectUri = `${config.PUBLIC_BASE_URL.replace(/\/$/, '')}/api/auth/google/callback`;
  }

  get configured(): boolean {
    return !!this.#config.GOOGLE_CLIENT_ID && !!this.#config.GOOGLE_CLIENT_SECRET;
  }

  /** The provider's metadata, discovered once (and again after a failure). */
  #client(): Promise<oidc.Configuration> {
    const config = this.#config;
    this.#discovered ??= oidc
      .discovery(
        new URL(config.GOOGLE_ISSUER),
        config.GOOGLE_CLIENT_ID!,
        undefined,
        oidc.ClientSecretPost(config.GOOGLE_CLIENT_SECRET!),
        {
          timeout: Math.ceil(config.OAUTH_TIMEOUT_MS / 1000),
          // Plain http only for an issuer configured that way (a local provider in development and tests).
          execute: config.GOOGLE_ISSUER.startsWith('http://') ? [oidc.allowInsecureRequests] : [],
        },
      )
      .catch((error: unknown) => {
        this.#discovered = undefined;
        throw error;
      });
    return this.#discovered;
  }

  /** The account-selector URL, with a fresh state and PKCE verifier for the caller to remember. */
  async start(): Promise<{ url: string; state: string; codeVerifier: string }> {
    const client = await this.#client().catch((error: unknown) => {
      throw new GoogleSignInError('GoogleAuthError', { cause: error });
    });
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(client, {
      redirect_uri: this.redirectUri,
      scope: GOOGLE_SCOPES,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      access_type: 'offline',
      prompt: 'select_account',
    });
    return { url: url.href, state, codeVerifier };
  }

  /** Exchanges the callback's code and reads who signed in. */
  async finish(query: Record<string, unknown>, state: string, codeVerifier: string): Promise<ExternalIdentity> {
    const client = await this.#client().catch((error: unknown) => {
      throw new GoogleSignInError('GoogleAuthError', { cause: error });
    });
    const callbackUrl = new URL(this.redirectUri);
    for (const [key, value] of Object.entries(query))
      if (typeof value === 'string') callbackUrl.searchParams.set(key, value);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(client, callbackUrl, {
        pkceCodeVerifier: codeVerifier,
        expectedState: state,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new GoogleSignInError('GoogleTokenFailed', { cause: error });
    }
    const claims = tokens.claims();
    if (!claims) throw new GoogleSignInError('GoogleTokenFailed');
    let profile: { email?: unknown; email_verified?: unknown; name?: unknown } = claims as Record<string, unknown>;
    if (typeof claims.email !== 'string') {
      try {
        profile = await oidc.fetchUserInfo(client, tokens.access_token, claims.sub);
      } catch (error) {
        throw new GoogleSignInError('GoogleAuthError', { cause: error });
      }
    }
    if (typeof profile.email !== 'string' || !profile.email) throw new GoogleSignInError('GoogleNoEmail');
    // Only an address the issuer says it verified (absent counts as not): anything else could be someone else's.
    if (profile.email_verified !== true) throw new GoogleSignInError('GoogleEmailNotVerified');
    return {
      provider: 'google',
      subject: claims.sub,
      email: profile.email,
      emailVerified: true,
      name: typeof profile.name === 'string' ? profile.name : undefined,
      tokens: {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        metadata: {
          tokenType: tokens.token_type,
          scope: tokens.scope,
          expiresAt: tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000).toISOString() : null,
          idToken: tokens.id_token,
        },
      },
    };
  }
}
