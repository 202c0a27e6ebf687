import { randomBytes, randomUUID } from 'node:crypto';
import type { SystemDb } from '@agentyard/db/system';

/**
 * One row of each user-owned table for a given user, made through the system connection. The
 * row-level-security test seeds every user-owned table with these and fails on a table that has
 * none, so each new table must add its seed here.
 */
export const seedRowFor: Record<string, (db: SystemDb, userId: string) => Promise<void>> = {
  sessions: async (db, userId) => {
    await db
      .insertInto('sessions')
      .values({
        user_id: userId,
        token_hash: randomBytes(32).toString('hex'),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
  },
  agents: async (db, userId) => {
    await db
      .insertInto('agents')
      .values({
        user_id: userId,
        name: 'seed',
        model: 'openrouter/auto',
        tools_profile: 'messaging',
        subdomain: `seed-${randomUUID().slice(0, 8)}`,
      })
      .execute();
  },
  subscriptions: async (db, userId) => {
    await db
      .insertInto('subscriptions')
      .values({ id: `sub_${randomUUID()}`, user_id: userId, status: 'active' })
      .execute();
  },
  billing_customers: async (db, userId) => {
    await db
      .insertInto('billing_customers')
      .values({ user_id: userId, provider: 'local', customer_id: `cus_local_${randomUUID()}` })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },
  local_checkouts: async (db, userId) => {
    await db
      .insertInto('local_checkouts')
      .values({
        id_hash: randomBytes(32).toString('hex'),
        user_id: userId,
        kind: 'subscription',
        plan: 'solo',
        session_id: `cs_local_${randomUUID()}`,
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
  },
  underground_wallets: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('underground_wallets')
      .values({
        address: `0x${randomBytes(20).toString('hex')}`,
        user_id: userId,
        agent_id: agentId,
        private_key_sealed: 'v1.seed.x.x.x',
      })
      .execute();
  },
  underground_events: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('underground_events')
      .values({
        user_id: userId,
        agent_id: agentId,
        name: 'seed',
        description: 'seed',
        venue: 'seed',
        event_date: new Date(),
        ticket_price_usdc: '1.5',
        total_tickets: 10,
      })
      .execute();
  },
  underground_splits: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('underground_splits')
      .values({ user_id: userId, agent_id: agentId, name: 'seed', total_amount_usdc: '10', status: 'completed' })
      .execute();
  },
  underground_split_recipients: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    const split = await db
      .insertInto('underground_splits')
      .values({ user_id: userId, agent_id: agentId, name: 'seed', total_amount_usdc: '10', status: 'completed' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('underground_split_recipients')
      .values({
        split_id: split.id,
        position: 0,
        user_id: userId,
        address: `0x${randomBytes(20).toString('hex')}`,
        share_percent: '100',
        amount_usdc: '10',
      })
      .execute();
  },
  bus_endpoints: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('bus_endpoints')
      .values({
        agent_id: agentId,
        user_id: userId,
        signer_address: `0x${randomBytes(20).toString('hex')}`,
        webhook_url: 'https://agent.example/hooks',
      })
      .execute();
  },
  bus_messages: async (db, userId) => {
    await db
      .insertInto('bus_messages')
      .values({
        message_id: randomUUID(),
        user_id: userId,
        from_agent_id: randomUUID(),
        to_agent_id: randomUUID(),
        action: 'PING',
        payload: '{}',
        signed_at: new Date(),
        signature: '0x',
      })
      .execute();
  },
  user_trader_keys: async (db, userId) => {
    await db
      .insertInto('user_trader_keys')
      .values({ user_id: userId, api_key_sealed: 'v1.seed.x.x.x' })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },
  trader_jobs: async (db, userId) => {
    await db
      .insertInto('trader_jobs')
      .values({ user_id: userId, job_id: `job_${randomUUID()}`, platform_key: true })
      .execute();
  },
  trader_threads: async (db, userId) => {
    await db
      .insertInto('trader_threads')
      .values({ user_id: userId, thread_id: `thread_${randomUUID()}`, platform_key: true })
      .execute();
  },
  usage_events: async (db, userId) => {
    await db
      .insertInto('usage_events')
      .values({
        id: randomUUID(),
        user_id: userId,
        user_ref: userId,
        agent_id: null,
        model: 'openai/gpt-4o-mini',
        provider: 'openai',
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 2,
        cost_usd: '0.00000075',
        turn_count: 1,
        occurred_at: new Date(),
        day: new Date().toISOString().slice(0, 10),
      })
      .execute();
  },
  usage_daily: async (db, userId) => {
    await db
      .insertInto('usage_daily')
      .values({
        day: new Date().toISOString().slice(0, 10),
        user_ref: userId,
        user_id: userId,
        agent_id: '',
        model: 'openai/gpt-4o-mini',
        provider: 'openai',
        calls: 1,
        unpriced_calls: 0,
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 2,
        cost_usd: '0.00000075',
        turns: 1,
      })
      .execute();
  },
  usage_tools_daily: async (db, userId) => {
    await db
      .insertInto('usage_tools_daily')
      .values({
        day: new Date().toISOString().slice(0, 10),
        user_ref: userId,
        user_id: userId,
        agent_id: '',
        tool: 'seed_tool',
        calls: 1,
        answers: 1,
      })
      .execute();
  },
  provider_accounts: async (db, userId) => {
    await db
      .insertInto('provider_accounts')
      .values({ user_id: userId, provider: 'google', provider_subject: `seed-${randomUUID()}` })
      .execute();
  },
  api_keys: async (db, userId) => {
    await db
      .insertInto('api_keys')
      .values({ user_id: userId, name: 'seed', key_hash: randomBytes(32).toString('hex'), prefix: 'sk_seed' })
      .execute();
  },
  invites: async (db, userId) => {
    await db
      .insertInto('invites')
      .values({
        user_id: userId,
        name: 'seed',
        token_hash: randomBytes(32).toString('hex'),
        token_sealed: 'v1.seed.x.x.x',
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
  },
  email_verifications: async (db, userId) => {
    await db
      .insertInto('email_verifications')
      .values({
        user_id: userId,
        email: 'seed@agentyard.test',
        token_hash: randomBytes(32).toString('hex'),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
  },
  password_resets: async (db, userId) => {
    await db
      .insertInto('password_resets')
      .values({
        user_id: userId,
        request_id: randomUUID(),
        token_hash: randomBytes(32).toString('hex'),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
  },
  agent_configs: async (db, userId) => {
    await db
      .insertInto('agent_configs')
      .values({ user_id: userId, config: JSON.stringify({ logging: { level: 'info' } }) as never })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },
  config_backups: async (db, userId) => {
    await db
      .insertInto('config_backups')
      .values({ id: `bkp_${randomBytes(8).toString('hex')}`, user_id: userId, config: JSON.stringify({}) as never })
      .execute();
  },
  devices: async (db, userId) => {
    await db
      .insertInto('devices')
      .values({ id: `dev_${randomBytes(8).toString('hex')}`, user_id: userId, name: 'seed phone', ip: '127.0.0.1' })
      .execute();
  },
  workflows: async (db, userId) => {
    await db.insertInto('workflows').values({ user_id: userId, name: 'seed' }).execute();
  },
  workflow_nodes: async (db, userId) => {
    const workflow = await db
      .insertInto('workflows')
      .values({ user_id: userId, name: 'seed' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('workflow_nodes')
      .values({ workflow_id: workflow.id, user_id: userId, type: 'trigger' })
      .execute();
  },
  scheduled_tasks: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('scheduled_tasks')
      .values({
        user_id: userId,
        agent_id: agentId,
        name: 'seed',
        cron_schedule: '0 * * * *',
        prompt: 'seed',
        enabled: false,
      })
      .execute();
  },
  scheduled_task_runs: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    const task = await db
      .insertInto('scheduled_tasks')
      .values({
        user_id: userId,
        agent_id: agentId,
        name: 'seed',
        cron_schedule: '0 * * * *',
        prompt: 'seed',
        enabled: false,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('scheduled_task_runs')
      .values({ task_id: task.id, user_id: userId, due_at: new Date(), status: 'missed' })
      .execute();
  },
  deleted_agents: async (db, userId) => {
    await db.insertInto('deleted_agents').values({ id: randomUUID(), user_id: userId }).execute();
  },
  heartbeats: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('heartbeats')
      .values({ user_id: userId, agent_ref: agentId, agent_id: agentId, enabled: false })
      .execute();
  },
  heartbeat_runs: async (db, userId) => {
    await db
      .insertInto('heartbeat_runs')
      .values({ user_id: userId, agent_ref: randomUUID(), due_at: new Date(), status: 'delivered' })
      .execute();
  },
  credit_entries: async (db, userId) => {
    await db
      .insertInto('credit_entries')
      .values({ user_id: userId, kind: 'grant', amount_usd: '1', note: 'seed', source: `seed:${randomUUID()}` })
      .execute();
  },
  spending_limits: async (db, userId) => {
    await db
      .insertInto('spending_limits')
      .values({ user_id: userId, monthly_usd: '10' })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },
  agent_metric_samples: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_metric_samples')
      .values({
        agent_id: agentId,
        user_id: userId,
        sampled_at: new Date(),
        running: true,
        cpu_percent: 1,
        memory_bytes: 1024,
      })
      .execute();
  },
  agent_metric_hours: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_metric_hours')
      .values({
        agent_id: agentId,
        user_id: userId,
        hour: new Date(),
        samples: 1,
        running_samples: 1,
        cpu_percent: 1,
        memory_bytes: 1024,
      })
      .execute();
  },
  agent_snapshots: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db.insertInto('agent_snapshots').values({ agent_id: agentId, user_id: userId, reason: 'manual' }).execute();
  },
  agent_channels: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_channels')
      .values({
        agent_id: agentId,
        user_id: userId,
        channel: 'telegram',
        credentials_sealed: 'v1:sealed',
        credential_hint: 'abcd',
      })
      .execute();
  },
  swarms: async (db, userId) => {
    await seedSwarm(db, userId);
  },
  swarm_members: async (db, userId) => {
    await seedSwarm(db, userId);
  },
  swarm_runs: async (db, userId) => {
    await seedSwarmRun(db, userId);
  },
  swarm_run_members: async (db, userId) => {
    await seedSwarmRun(db, userId);
  },
  installations: async (db, userId) => {
    await db
      .insertInto('installations')
      .values({ user_id: userId, kind: 'home', mode: 'local', name: 'seed' })
      .execute();
  },
  agent_events: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_events')
      .values({ agent_id: agentId, user_id: userId, kind: 'exit', exit_code: 137 })
      .execute();
  },
  agent_config_backups: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_config_backups')
      .values({
        id: `acb_${randomBytes(8).toString('hex')}`,
        agent_id: agentId,
        user_id: userId,
        config: {},
        model: 'openrouter/auto',
      })
      .execute();
  },
  agent_spending_limits: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_spending_limits')
      .values({ agent_id: agentId, user_id: userId, monthly_usd: '1' })
      .execute();
  },
  agent_minute_limits: async (db, userId) => {
    const agentId = await seedAgent(db, userId);
    await db
      .insertInto('agent_minute_limits')
      .values({ agent_id: agentId, user_id: userId, requests_per_minute: 10, tokens_per_minute: null })
      .execute();
  },
  api_key_minute_limits: async (db, userId) => {
    const key = await db
      .insertInto('api_keys')
      .values({ user_id: userId, name: 'seed', key_hash: randomBytes(32).toString('hex'), prefix: 'sk_seed' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('api_key_minute_limits')
      .values({ key_id: key.id, user_id: userId, requests_per_minute: 10, tokens_per_minute: null })
      .execute();
  },
  provider_keys: async (db, userId) => {
    await db
      .insertInto('provider_keys')
      .values({ user_id: userId, provider: 'openai', key_sealed: 'v1:sealed', key_hint: 'abcd' })
      .execute();
  },
};

/** Tables that hold no user's data (or are keyed another way) and why; everything else is user-owned. */
export const tablesWithoutOwner: Record<string, string> = {
  kysely_migration: 'migration bookkeeping',
  kysely_migration_lock: 'migration bookkeeping',
  bridge_messages: 'operator bridge: platform-level messages between operator agents, read with the API key',
  bridge_read_ranges:
    'operator bridge read markers (ranges of a channel a reader has read), keyed by reader name, not by user',
  webhook_events: 'inbound provider webhooks (live stream, hosting-platform status): platform-level',
  stripe_events: 'Stripe webhook events already applied (idempotency by event id): platform-level',
  password_reset_requests:
    'forgot-password requests by email address, before any user is known; deleted once the mail worker handled them',
  risc_events: 'security events from the identity provider (deduplication by jti), applied across users by the worker',
  auth_nonces: 'wallet sign-in nonces, issued before anyone is signed in; single use',
  oauth_states: 'OAuth state and sealed PKCE verifier between redirect and callback, before anyone is signed in',
  email_events: 'email-provider webhook events (idempotency by event id): platform-level',
  email_suppressions: 'addresses that bounced or complained: platform-level mail suppression',
};

/** An agent of `userId` for seeds of tables that reference one. */
async function seedAgent(db: SystemDb, userId: string): Promise<string> {
  const row = await db
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'seed',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `seed-${randomUUID().slice(0, 8)}`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A swarm of one seeded agent (a row in swarms and one in swarm_members). */
async function seedSwarm(db: SystemDb, userId: string): Promise<string> {
  const agentId = await seedAgent(db, userId);
  const swarm = await db
    .insertInto('swarms')
    .values({ user_id: userId, name: 'seed' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('swarm_members')
    .values({ swarm_id: swarm.id, agent_id: agentId, user_id: userId, position: 0 })
    .execute();
  return swarm.id;
}

/** A finished run of a seeded swarm with one member's answer. */
async function seedSwarmRun(db: SystemDb, userId: string): Promise<void> {
  const swarmId = await seedSwarm(db, userId);
  const member = await db
    .selectFrom('swarm_members')
    .select('agent_id')
    .where('swarm_id', '=', swarmId)
    .executeTakeFirstOrThrow();
  const run = await db
    .insertInto('swarm_runs')
    .values({ swarm_id: swarmId, user_id: userId, mode: 'all', message: 'seed', status: 'completed' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('swarm_run_members')
    .values({
      run_id: run.id,
      agent_id: member.agent_id,
      user_id: userId,
      position: 0,
      status: 'answered',
      answer: 'seed',
    })
    .execute();
}
