import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { hashToken, randomToken } from '@agentyard/crypto';
import { appDb, createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadAiConfig } from '../src/config.ts';

/** The AI service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string> = {}): Promise<ServiceApp> {
  const config = loadAiConfig({ ...process.env, USAGE_FLUSH_MS: '60000', ...env });
  const app = await buildApp(config, { db: appDb(), systemDb: systemDb() });
  t.teardown(() => app.close());
  return app;
}

/** Headers of a backend caller holding the internal key, with plan headers. */
export function backendHeaders(
  options: { userId?: string; email?: string; admin?: boolean; plan?: string; subscription?: string } = {},
): Record<string, string> {
  return {
    ...identityHeaders({
      surface: 'backend',
      auth: 'service',
      userId: options.userId ?? null,
      email: options.email ?? null,
      admin: options.admin ?? false,
    }),
    ...(options.plan ? { 'x-user-plan': options.plan } : {}),
    ...(options.subscription ? { 'x-stripe-subscription-id': options.subscription } : {}),
  };
}

/** An active subscription row, as the Stripe webhook would have left it. */
export async function activeSubscriptionRow(
  userId: string | null,
  plan: string | null = null,
  status = 'active',
): Promise<string> {
  const id = `sub_${crypto.randomUUID().replace(/-/g, '').slice(0, 20)}`;
  await systemDb()
    .insertInto('subscriptions')
    .values({ id, user_id: userId, status, plan, updated_at: new Date() })
    .execute();
  return id;
}

/** A hosted agent of a new user subscribed to `plan` (`free`: no subscription), with its AI key (`ag_…`) for the OpenAI-compatible surface. */
export async function agentWithKey(plan: string, provider = 'openai') {
  const user = await createUserRow({ plan });
  return { user, ...(await hostedAgentOf(user.id, provider)) };
}

/** A hosted agent of the user's, with its AI key (`ag_…`) for the OpenAI-compatible surface. */
export async function hostedAgentOf(userId: string, provider = 'openai') {
  const key = `ag_${randomToken()}`;
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'helper',
      model: 'openai/gpt-4o-mini',
      tools_profile: 'messaging',
      subdomain: `a-${crypto.randomUUID().slice(0, 8)}`,
      ai_provider: provider,
      ai_key_hash: hashToken(key),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, agentId: agent.id };
}

/** Resolves once `app` has applied the database's cache notice `payload` (as every gateway process does). */
export const noticeApplied = (app: ServiceApp, payload: string) =>
  new Promise<void>((resolve) => {
    const on = (p: string) => {
      if (p !== payload) return;
      app.callerLookups.events.off('notice', on);
      resolve();
    };
    app.callerLookups.events.on('notice', on);
  });

/** Headers of a hosted agent calling with its AI key. */
export const agentHeaders = (key: string) => ({
  ...identityHeaders({ surface: 'backend' }),
  authorization: `Bearer ${key}`,
});
