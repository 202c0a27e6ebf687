import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

const Timeout = (fallback: number, description: string) =>
  Type.Integer({ minimum: 100, default: fallback, description });

export const authSettings = {
  CAPTCHA_VERIFY_URL: Type.Optional(
    Type.String({
      description:
        'siteverify endpoint of a captcha provider (Turnstile/hCaptcha form protocol); unset disables the captcha check',
    }),
  ),
  CAPTCHA_SECRET: Type.Optional(Secret({ minLength: 1 })),
  CAPTCHA_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000 }),

  ENCRYPTION_KEYS: Secret({
    minLength: 40,
    description:
      'AES-256-GCM keys `id:base64key,...`, first is current: provider tokens, invite codes and PKCE verifiers at rest',
  }),
  SESSION_SECRET: Secret({
    minLength: 32,
    description: 'general session secret; signs farcaster session tokens when FARCASTER_SESSION_SECRET is unset',
  }),

  GOOGLE_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Google OAuth client id; unset turns Google sign-in off (redirect /login?error=GoogleNotConfigured)',
    }),
  ),
  GOOGLE_CLIENT_SECRET: Type.Optional(Secret({ minLength: 1, description: 'Google OAuth client secret' })),
  GOOGLE_ISSUER: Type.String({
    default: 'https://accounts.google.com',
    description:
      'OpenID issuer for Google sign-in (its discovery document is read from <issuer>/.well-known/openid-configuration)',
  }),
  GOOGLE_RISC_CONFIGURATION_URL: Type.String({
    default: 'https://accounts.google.com/.well-known/risc-configuration',
    description: 'discovery document of the security event (RISC) transmitter: issuer and jwks_uri',
  }),
  GOOGLE_RISC_AUDIENCES: Type.String({
    default: '',
    description: 'further client ids accepted as security event audience, comma-separated (GOOGLE_CLIENT_ID always is)',
  }),
  RISC_KEY_SET_COOLDOWN_MS: Type.Integer({
    minimum: 0,
    default: 30_000,
    description: 'least time between two fetches of the security event key set (an unknown kid refetches after it)',
  }),
  GITHUB_CLIENT_ID: Type.Optional(
    Type.String({ minLength: 1, description: 'GitHub OAuth app client id; unset turns GitHub sign-in off' }),
  ),
  GITHUB_CLIENT_SECRET: Type.Optional(Secret({ minLength: 1, description: 'GitHub OAuth app client secret' })),
  GITHUB_BASE_URL: Type.String({
    default: 'https://github.com',
    description: 'GitHub web base (authorize and token endpoints)',
  }),
  GITHUB_API_URL: Type.String({ default: 'https://api.github.com', description: 'GitHub API base (user and emails)' }),
  OAUTH_TIMEOUT_MS: Timeout(10_000, 'timeout of each call to an OAuth/OIDC provider or key set'),

  SMTP_URL: Type.String({
    default: 'smtp://127.0.0.1:1025',
    description: 'outbound mail server (nodemailer URL: smtp://, smtps://, with credentials when needed)',
  }),
  EMAIL_FROM: Type.String({ default: 'Agentyard <no-reply@agentyard.local>', description: 'sender of outbound mail' }),
  SMTP_TIMEOUT_MS: Timeout(10_000, 'connection, greeting and socket timeout towards the mail server'),
  EMAIL_WEBHOOK_SECRET: Type.Optional(
    Secret({
      minLength: 8,
      description: "Svix signing secret (`whsec_...`) of the email provider's webhooks; unset refuses them with 503",
    }),
  ),
  INVITE_REQUIRED: Type.Boolean({
    default: false,
    description:
      'every new account (registration, Google, GitHub, wallet) needs an unused invite (`inviteToken`); either way a given invite is consumed by the account it creates',
  }),
  API_KEYS_PER_USER_MAX: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 20,
    description: 'API keys one user may hold; creating one more answers 429 API_KEY_LIMIT',
  }),
  INVITES_PER_USER_MAX: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 10,
    description:
      'unused, unexpired invites one user may hold at once (POST /api/invite); one more answers 429 INVITE_LIMIT',
  }),
  INVITES_PER_ADMIN_MAX: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 500,
    description:
      'unused, unexpired invites one admin may hold at once (POST /api/admin/invites); one more answers 429 INVITE_LIMIT',
  }),
  SIGN_IN_FREE_FAILURES: Type.Integer({
    minimum: 1,
    default: 5,
    description:
      'wrong passwords one account may have from one client network (IPv4 /24, IPv6 /64) before each further attempt from there waits',
  }),
  SIGN_IN_FIRST_DELAY_SECONDS: Type.Integer({
    minimum: 1,
    default: 1,
    description: 'the first wait after the free failures; it doubles with each further failure',
  }),
  SIGN_IN_MAX_DELAY_SECONDS: Type.Integer({
    minimum: 1,
    default: 900,
    description: 'the longest single wait of an account after failed sign-ins',
  }),
  SIGN_IN_FORGET_SECONDS: Type.Integer({
    minimum: 60,
    default: 3600,
    description:
      "an account's failed sign-ins from a network are forgotten this long after its last attempt from there",
  }),
  EMAIL_VERIFICATION_TTL_SECONDS: Type.Integer({
    minimum: 60,
    default: 86_400,
    description: 'life of an email verification link',
  }),
  PASSWORD_RESET_TTL_SECONDS: Type.Integer({
    minimum: 60,
    default: 3600,
    description: 'life of a password reset link',
  }),

  BASE_RPC_URL: Type.String({
    default: 'https://mainnet.base.org',
    description: 'JSON-RPC endpoint of the chain used for wallet signatures (ERC-1271/6492) and token gating',
  }),
  BASE_CHAIN_ID: Type.Integer({
    minimum: 1,
    default: 8453,
    description: 'chain id expected in sign-in messages and used for balances',
  }),
  RPC_TIMEOUT_MS: Timeout(10_000, 'timeout of each JSON-RPC call'),
  SIWE_DOMAIN: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'domain a Sign-In With Ethereum message must name (default: the host of PUBLIC_BASE_URL)',
    }),
  ),
  NONCE_TTL_SECONDS: Type.Integer({
    minimum: 10,
    maximum: 3600,
    default: 300,
    description: 'life of a wallet sign-in nonce',
  }),
  TOKEN_GATE_TOKEN_ADDRESS: Type.Optional(
    Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: 'ERC-20 whose balance gates access; unset: token gating answers 503',
    }),
  ),
  TOKEN_GATE_MIN_BALANCE: Type.String({
    pattern: '^[0-9]{1,78}$',
    default: '1',
    description: 'minimum balance of the gating token, in base units',
  }),

  FARCASTER_ISSUER: Type.String({
    default: 'https://auth.farcaster.xyz',
    description: 'issuer of farcaster identity tokens',
  }),
  FARCASTER_JWKS_URL: Type.Optional(
    Type.String({ description: 'key set of the farcaster issuer (default <issuer>/.well-known/jwks.json)' }),
  ),
  FARCASTER_AUDIENCE: Type.Optional(
    Type.String({
      description: 'audience farcaster identity tokens must carry (default: the host of PUBLIC_BASE_URL)',
    }),
  ),
  FARCASTER_RPC_URL: Type.String({
    default: 'https://mainnet.optimism.io',
    description:
      'JSON-RPC endpoint of the chain holding the farcaster IdRegistry (custody addresses), for the token gate',
  }),
  FARCASTER_ID_REGISTRY_ADDRESS: Type.String({
    pattern: '^0x[0-9a-fA-F]{40}$',
    default: '0x00000000Fc6c5F01Fc30151999387Bb99A9f489b',
    description: 'the farcaster IdRegistry contract (custodyOf)',
  }),
  FARCASTER_HUB_URL: Type.Optional(
    Type.String({
      description:
        "HTTP API of a farcaster hub; when set, an fid's verified addresses pass the token gate too (else only its custody address)",
    }),
  ),
  FARCASTER_SESSION_SECRET: Type.Optional(
    Secret({
      minLength: 32,
      description: 'HMAC-SHA256 key of farcaster session tokens (falls back to SESSION_SECRET)',
    }),
  ),
  FARCASTER_SESSION_TTL_SECONDS: Type.Integer({
    minimum: 60,
    default: 86_400,
    description: 'life of a farcaster session token',
  }),
  FARCASTER_REFRESH_WINDOW_SECONDS: Type.Integer({
    minimum: 0,
    default: 7 * 86_400,
    description: 'how long after expiry a signed farcaster session token may still be refreshed',
  }),
};

export function loadAuthConfig(env?: Record<string, string | undefined>) {
  return loadConfig(authSettings, env ? { env, files: false } : {});
}

export type AuthConfig = ReturnType<typeof loadAuthConfig>;

/** The host sign-in messages and identity tokens must name. */
export function publicHost(config: AuthConfig): string {
  return new URL(config.PUBLIC_BASE_URL).host;
}
