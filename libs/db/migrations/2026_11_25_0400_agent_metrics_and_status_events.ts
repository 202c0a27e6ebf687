import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Samples of each running agent's container (CPU, memory, network) taken by the agents worker,
// kept raw for 7 days and as hourly averages for 90 days (the worker prunes and rolls up). And a
// notice on every change of an agent's status, sent by the database at commit whoever wrote it
// (provisioning, lifecycle routes, the reconciler), for the per-user event stream.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('agent_metric_samples')
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sampled_at', 'timestamptz', (c) => c.notNull())
    .addColumn('running', 'boolean', (c) => c.notNull())
    .addColumn('cpu_percent', sql`double precision`)
    .addColumn('memory_bytes', 'bigint')
    .addColumn('network_rx_bytes', 'bigint')
    .addColumn('network_tx_bytes', 'bigint')
    .addPrimaryKeyConstraint('agent_metric_samples_pkey', ['agent_id', 'sampled_at'])
    .execute();
  await db.schema.createIndex('agent_metric_samples_sampled_idx').on('agent_metric_samples').column('sampled_at').execute();
  await ownedByUser(db, 'agent_metric_samples');

  await db.schema.createTable('agent_metric_hours')
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('samples', 'integer', (c) => c.notNull().check(sql`samples > 0`))
    .addColumn('running_samples', 'integer', (c) => c.notNull().check(sql`running_samples >= 0`))
    .addColumn('cpu_percent', sql`double precision`)
    .addColumn('memory_bytes', 'bigint')
    .addColumn('network_rx_bytes', 'bigint')
    .addColumn('network_tx_bytes', 'bigint')
    .addPrimaryKeyConstraint('agent_metric_hours_pkey', ['agent_id', 'hour'])
    .execute();
  await db.schema.createIndex('agent_metric_hours_hour_idx').on('agent_metric_hours').column('hour').execute();
  await ownedByUser(db, 'agent_metric_hours');

  // The payload names the owner: the listener hands each notice only to that user's streams.
  await sql`
    create function agent_status_notice() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('agent_status', json_build_object('userId', old.user_id, 'agentId', old.id, 'status', 'deleted', 'previousStatus', old.status, 'at', now())::text);
        return old;
      end if;
      if tg_op = 'INSERT' or new.status is distinct from old.status then
        perform pg_notify('agent_status', json_build_object('userId', new.user_id, 'agentId', new.id, 'status', new.status,
          'previousStatus', case when tg_op = 'INSERT' then null else old.status end, 'at', now())::text);
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger agents_status_notice after insert or update of status or delete on agents for each row execute function agent_status_notice()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists agents_status_notice on agents`.execute(db);
  await sql`drop function if exists agent_status_notice()`.execute(db);
  await db.schema.dropTable('agent_metric_hours').ifExists().execute();
  await db.schema.dropTable('agent_metric_samples').ifExists().execute();
}
