import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

export const traderSettings = {
  ENCRYPTION_KEYS: Secret({
    minLength: 1,
    description: "keyring sealing users' trading-service keys at rest: id:base64key,... (first is current)",
  }),
  TRADER_API_URL: Type.String({
    default: 'https://api.bankr.bot',
    description: 'base URL of the trading service (POST /agent/prompt, GET /agent/job/:id, GET /agent/balances)',
  }),
  TRADER_API_KEY: Type.Optional(
    Secret({
      minLength: 1,
      description:
        'platform trading-service key, used for entitled users (TRADER_PLATFORM_KEY_PLANS, admins) who have no key of their own; others get 503 needsKey',
    }),
  ),
  TRADER_PLATFORM_KEY_PLANS: Type.String({
    default: 'solo,collective,label,network',
    pattern: '^[a-z0-9_-]*(,[a-z0-9_-]+)*$',
    description:
      "comma-separated plans (of the user's active subscription) entitled to the platform trading key; admins always are",
  }),
  TRADER_JOB_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 30,
    description:
      'how long a job started through the relay stays bound to its user (and can be polled), and a thread after its last prompt (and can be continued)',
  }),
  TRADER_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 15000,
    description: 'timeout of each call to the trading service',
  }),
};

export function loadTraderConfig(env?: Record<string, string | undefined>) {
  return loadConfig(traderSettings, env ? { env, files: false } : {});
}

export type TraderConfig = ReturnType<typeof loadTraderConfig>;
