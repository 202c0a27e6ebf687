import { Type } from 'typebox';
import { Errors, IsoDate, Success, Uuid } from './common.ts';
import { route } from './route.ts';

const Email = Type.String({ minLength: 1, maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'an EVM address' });
const Redirect = { 302: Type.Null(), ...Errors };
const InviteToken = Type.String({
  pattern: '^[0-9a-fA-F]{64}$',
  description:
    'an invite (64 hex characters), used up when this sign-in creates the account; required for new accounts when the server requires invites',
});

// ---- OAuth (Google, GitHub) ----
/** Holds the random value that ties an OAuth flow to the browser that started it (login-CSRF protection). */
export const OAUTH_BINDING_COOKIE = 'agentyard-oauth';
const oauthBinding = [OAUTH_BINDING_COOKIE];
export const OAuthCallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 512 })),
  },
  {
    additionalProperties: true,
    description: 'providers add parameters of their own (scope, authuser, iss...), which are ignored',
  },
);
/** The start of an OAuth sign-in: an invite rides along in the flow's server-side state (hashed). */
export const OAuthStartQuery = Type.Object(
  { inviteToken: Type.Optional(InviteToken) },
  { additionalProperties: false },
);

// ---- Security events (RISC) ----
export const SecurityEventToken = Type.String({
  minLength: 5,
  maxLength: 16384,
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$',
  description:
    'the raw security event token (a JWS compact serialization); sent as application/secevent+jwt, application/jwt, text/plain or a JSON string',
});
export const SecurityEventStatus = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('not_configured')]),
  supportedEvents: Type.Array(Type.String()),
});

// ---- Wallet sign-in ----
export const Nonce = Type.Object({ nonce: Type.String(), expiresAt: IsoDate });
export const WalletAuthBody = Type.Object(
  {
    address: Address,
    message: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'the Sign-In With Ethereum (EIP-4361) message that was signed',
    }),
    signature: Type.String({
      pattern: '^0x[0-9a-fA-F]+$',
      maxLength: 20000,
      description: 'EOA, ERC-1271 or ERC-6492 signature',
    }),
    inviteToken: Type.Optional(InviteToken),
  },
  { additionalProperties: false },
);
export const WalletAuthResponse = Type.Object({
  ok: Type.Literal(true),
  user: Type.Object({ id: Uuid, name: Type.String(), email: Type.String() }),
  address: Type.String(),
});

// ---- Token gating ----
export const TokenGateQuery = Type.Object({ address: Address }, { additionalProperties: false });
export const TokenGateBody = Type.Object({ address: Address }, { additionalProperties: false });
export const TokenGateResult = Type.Object({
  eligible: Type.Literal(true),
  address: Type.String(),
  token: Type.String(),
  chainId: Type.Integer(),
  balance: Type.String({ description: 'base units' }),
  minimum: Type.String({ description: 'base units' }),
});

// ---- Farcaster ----
export const FarcasterVerifyBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'the identity token (a JWT) from the farcaster auth server',
    }),
    address: Type.Optional(Address),
    tokenGate: Type.Optional(Type.Boolean({ description: 'also require a sufficient token balance of `address`' })),
  },
  { additionalProperties: false },
);
export const FarcasterSession = Type.Object({
  sessionToken: Type.String({ description: '{base64url-data}.{base64url-signature}, HMAC-SHA256' }),
  fid: Type.Integer(),
  expiresAt: IsoDate,
});
export const FarcasterRefreshBody = Type.Object(
  { sessionToken: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);
export const FarcasterMetadata = Type.Object({
  issuer: Type.String(),
  audience: Type.String(),
  sessionTtlSeconds: Type.Integer(),
  refreshWindowSeconds: Type.Integer(),
  tokenGating: Type.Boolean(),
});

// ---- Password reset ----
export const ForgotPasswordBody = Type.Object(
  {
    email: Email,
    website: Type.Optional(Type.String({ maxLength: 2048 })),
    captchaToken: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export const ForgotPasswordResponse = Type.Object({ success: Type.Literal(true), message: Type.String() });
export const ResetPasswordBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 256 }),
    password: Password,
  },
  { additionalProperties: false },
);

// ---- Email-provider webhook (Svix signatures, as Resend sends them) ----
export const EmailWebhookBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 100 }),
    created_at: Type.Optional(Type.String({ maxLength: 64 })),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true },
);
export const EmailWebhookAck = Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() });

/** How people can sign in and register on this server, for the console to offer exactly those. */
export const SignInOptions = Type.Object({
  google: Type.Boolean({ description: 'Google sign-in is set up' }),
  github: Type.Boolean({ description: 'GitHub sign-in is set up' }),
  inviteRequired: Type.Boolean({ description: 'every new account needs an unused invite (`inviteToken`)' }),
});

export const signInRoutes = {
  options: route({
    method: 'GET',
    url: '/api/auth/options',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Which sign-in methods this server offers (Google, GitHub) and whether registration needs an invite',
    schema: { response: { 200: SignInOptions, ...Errors } },
  }),
  google: route({
    method: 'GET',
    url: '/api/auth/google',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-oauth',
    forwardCookies: oauthBinding,
    summary:
      "Redirect to Google's account selector (openid email profile, offline, PKCE); unconfigured: /login?error=GoogleNotConfigured",
    schema: { querystring: OAuthStartQuery, response: Redirect },
  }),
  googleCallback: route({
    method: 'GET',
    url: '/api/auth/google/callback',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-oauth',
    forwardCookies: oauthBinding,
    summary:
      'Google redirects here: signs in (creating or linking the user), sets the cookie, redirects to /dashboard; failures to /login?error=',
    schema: { querystring: OAuthCallbackQuery, response: Redirect },
  }),
  github: route({
    method: 'GET',
    url: '/api/auth/github',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-oauth',
    forwardCookies: oauthBinding,
    summary: "Redirect to GitHub's authorization page; unconfigured: /login?error=GitHubNotConfigured",
    schema: { querystring: OAuthStartQuery, response: Redirect },
  }),
  githubCallback: route({
    method: 'GET',
    url: '/api/auth/github/callback',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-oauth',
    forwardCookies: oauthBinding,
    summary: 'GitHub redirects here: signs in like the Google callback; failures to /login?error=',
    schema: { querystring: OAuthCallbackQuery, response: Redirect },
  }),
  securityEvent: route({
    method: 'POST',
    url: '/api/security/risc',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    badRequest: { all: 'Invalid security event token' },
    summary: 'Receive a security event token (RISC); 202 with an empty body, processed asynchronously',
    schema: { body: SecurityEventToken, response: { 202: Type.Null(), ...Errors } },
  }),
  securityEventStatus: route({
    method: 'GET',
    url: '/api/security/risc',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: "The security event receiver's status and the event kinds it acts on",
    schema: { response: { 200: SecurityEventStatus, ...Errors } },
  }),
  legacySecurityEvent: route({
    method: 'POST',
    url: '/api/auth/google/risc',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    badRequest: { all: 'Invalid security event token' },
    summary: 'Deprecated (superseded by /api/security/risc): same validation, users matched by email only',
    schema: { body: SecurityEventToken, response: { 202: Type.Null(), ...Errors } },
  }),
  nonce: route({
    method: ['GET', 'POST'],
    url: '/api/auth/nonce',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-wallet-nonce',
    summary: 'A single-use nonce for a wallet sign-in message (expires in minutes)',
    schema: { response: { 200: Nonce, ...Errors } },
  }),
  walletAuth: route({
    method: 'POST',
    url: '/api/wallet-auth',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-wallet-auth',
    summary:
      'Sign in with a wallet (Sign-In With Ethereum; EOA, ERC-1271 and ERC-6492 signatures); sets the session cookie',
    schema: { body: WalletAuthBody, response: { 200: WalletAuthResponse, ...Errors } },
  }),
  farcasterVerify: route({
    method: 'POST',
    url: '/api/auth/farcaster/verify',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-farcaster-verify',
    summary: 'Exchange a farcaster identity token for a signed session token (optionally token-gated)',
    schema: { body: FarcasterVerifyBody, response: { 200: FarcasterSession, ...Errors } },
  }),
  farcasterVerifyMetadata: route({
    method: 'GET',
    url: '/api/auth/farcaster/verify',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'How farcaster sign-in is configured',
    schema: { response: { 200: FarcasterMetadata, ...Errors } },
  }),
  farcasterRefresh: route({
    method: 'POST',
    url: '/api/auth/farcaster/refresh',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary:
      'A fresh session token for a validly signed one (also shortly after it expired); unsigned or tampered tokens are refused',
    schema: { body: FarcasterRefreshBody, response: { 200: FarcasterSession, ...Errors } },
  }),
  farcasterRefreshMetadata: route({
    method: 'GET',
    url: '/api/auth/farcaster/refresh',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'How farcaster session tokens are refreshed',
    schema: { response: { 200: FarcasterMetadata, ...Errors } },
  }),
  tokenGateCheck: route({
    method: 'GET',
    url: '/api/auth/token-gating/verify',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-token-gate',
    summary: 'Whether a wallet holds at least the configured balance of the gating token; 403 when not',
    schema: { querystring: TokenGateQuery, response: { 200: TokenGateResult, ...Errors } },
  }),
  tokenGateVerify: route({
    method: 'POST',
    url: '/api/auth/token-gating/verify',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-token-gate',
    summary: 'Whether a wallet holds at least the configured balance of the gating token; 403 when not',
    schema: { body: TokenGateBody, response: { 200: TokenGateResult, ...Errors } },
  }),
  forgotPassword: route({
    method: 'POST',
    url: '/api/auth/forgot-password',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-forgot-password',
    summary: 'Mail a password reset link; the same answer whether or not the email exists',
    schema: { body: ForgotPasswordBody, response: { 200: ForgotPasswordResponse, ...Errors } },
  }),
  resetPassword: route({
    method: 'POST',
    url: '/api/auth/reset-password',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-reset-password',
    summary: 'Set a new password with a reset token (single use, one hour); ends every session of the user',
    schema: { body: ResetPasswordBody, response: { 200: Success, ...Errors } },
  }),
  emailWebhook: route({
    method: 'POST',
    url: '/api/webhooks/email',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary:
      'Email-provider events (sent, delivered, bounced, opened, clicked, complained, inbound), Svix-signed; bounces and complaints suppress the address',
    schema: { body: EmailWebhookBody, response: { 200: EmailWebhookAck, ...Errors } },
  }),
};
