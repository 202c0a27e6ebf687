import type { AuthConfig } from '../config.ts';
import type { ExternalIdentity } from './external-sign-in.ts';
import { GitHubSignIn, GitHubSignInError } from './github-sign-in.ts';
import { GoogleSignIn, GoogleSignInError } from './google-sign-in.ts';

/** A provider's answer to the callback: its query as sent, with the code and state the flow checked. */
export type CallbackQuery = Record<string, unknown> & { code: string; state: string };

/** An OAuth provider of the one sign-in flow: how it starts and finishes, and its `/login?error=` reasons. */
export interface OAuthProvider {
  name: 'google' | 'github';
  configured: boolean;
  start(): Promise<{ url: string; state: string; codeVerifier: string }>;
  finish(query: CallbackQuery, codeVerifier: string): Promise<ExternalIdentity>;
  /** The reason a failure of the provider itself names, else undefined. */
  failureReason(error: unknown): string | undefined;
  reasons: { notConfigured: string; failed: string; error: string };
}

export function googleProvider(config: AuthConfig): OAuthProvider {
  const google = new GoogleSignIn(config);
  return {
    name: 'google',
    get configured() {
      return google.configured;
    },
    start: () => google.start(),
    finish: (query, codeVerifier) => google.finish(query, query.state, codeVerifier),
    failureReason: (error) => (error instanceof GoogleSignInError ? error.reason : undefined),
    reasons: { notConfigured: 'GoogleNotConfigured', failed: 'GoogleAuthFailed', error: 'GoogleAuthError' },
  };
}

export function githubProvider(config: AuthConfig): OAuthProvider {
  const github = new GitHubSignIn(config);
  return {
    name: 'github',
    get configured() {
      return github.configured;
    },
    start: async () => github.start(),
    finish: (query, codeVerifier) => github.finish(query.code, codeVerifier),
    failureReason: (error) => (error instanceof GitHubSignInError ? error.reason : undefined),
    reasons: { notConfigured: 'GitHubNotConfigured', failed: 'GitHubAuthFailed', error: 'GitHubAuthError' },
  };
}
