import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { fetchWithTimeout } from '@agentyard/http';
import type { AuthConfig } from '../config.ts';
import type { ExternalIdentity } from './external-sign-in.ts';

export class GitHubSignInError extends Error {
  readonly reason: 'GitHubTokenFailed' | 'GitHubNoEmail' | 'GitHubAuthError';
  constructor(reason: GitHubSignInError['reason']) {
    super(reason);
    this.reason = reason;
  }
}

/** GitHub's OAuth web flow (plain OAuth 2 with PKCE; no OpenID Connect), user and verified primary email from its API. */
export class GitHubSignIn {
  readonly redirectUri: string;
  #config: AuthConfig;

  constructor(config: AuthConfig) {
    this.#config = config;
    this.redirectUri = `${config.PUBLIC_BASE_URL.replace(/\/$/, '')}/api/auth/github/callback`;
  }

  get configured(): boolean {
    return !!this.#config.GITHUB_CLIENT_ID && !!this.#config.GITHUB_CLIENT_SECRET;
  }

  start(): { url: string; state: string; codeVerifier: string } {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = new URL('/login/oauth/authorize', this.#config.GITHUB_BASE_URL);
    url.search = new URLSearchParams({
      client_id: this.#config.GITHUB_CLIENT_ID!,
      redirect_uri: this.redirectUri,
      scope: 'read:user user:email',
      state,
      code_challenge: pkceChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.href, state, codeVerifier };
  }

  async finish(code: string, codeVerifier: string): Promise<ExternalIdentity> {
    const { GITHUB_BASE_URL, GITHUB_API_URL, OAUTH_TIMEOUT_MS: timeoutMs } = this.#config;
    let accessToken: string;
    try {
      const response = await fetchWithTimeout(new URL('/login/oauth/access_token', GITHUB_BASE_URL), {
        method: 'POST',
        timeoutMs,
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: this.#config.GITHUB_CLIENT_ID!,
          client_secret: this.#config.GITHUB_CLIENT_SECRET!,
          code,
          redirect_uri: this.redirectUri,
          code_verifier: codeVerifier,
        }),
      });
      const body = (await response.json()) as { access_token?: unknown };
      if (!response.ok || typeof body.access_token !== 'string') throw new Error('no access token');
      accessToken = body.access_token;
    } catch {
      throw new GitHubSignInError('GitHubTokenFailed');
    }
    const api = async (path: string) => {
      const response = await fetchWithTimeout(new URL(path, GITHUB_API_URL), {
        timeoutMs,
        headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${accessToken}` },
      });
      if (!response.ok) throw new GitHubSignInError('GitHubAuthError');
      return response.json() as Promise<unknown>;
    };
    const user = (await api('/user')) as { id?: unknown; name?: unknown; login?: unknown };
    const emails = (await api('/user/emails')) as { email?: unknown; primary?: unknown; verified?: unknown }[];
    const primary = Array.isArray(emails)
      ? emails.find((e) => e.primary === true && e.verified === true && typeof e.email === 'string')
      : undefined;
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new GitHubSignInError('GitHubAuthError');
    if (!primary) throw new GitHubSignInError('GitHubNoEmail');
    return {
      provider: 'github',
      subject: String(user.id),
      email: primary.email as string,
      emailVerified: true,
      name: typeof user.name === 'string' ? user.name : typeof user.login === 'string' ? user.login : undefined,
      tokens: { accessToken, metadata: { login: user.login ?? null } },
    };
  }
}

function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
