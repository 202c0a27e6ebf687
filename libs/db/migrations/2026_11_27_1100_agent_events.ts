import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// What happened to each agent's container, as the engine reported it (an exit, an out-of-memory
// kill, a health change) and what the watchdog did about it (a restart, a crash loop, a recycle),
// for its owner. `engine_key` names the container run an event is about: every worker sees the
// engine's events, and the unique key lets exactly one record (and act on) each.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('agent_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('exit', 'oom', 'health', 'restarted', 'crash-loop', 'recycled')`))
    .addColumn('expected', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('exit_code', 'integer')
    .addColumn('oom_killed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('detail', 'text', (c) => c.check(sql`length(detail) <= 500`))
    /** The container's last lines of output when it exited, secrets redacted (at most 50). */
    .addColumn('log_tail', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`).check(sql`cardinality(log_tail) <= 50`))
    .addColumn('engine_key', 'text', (c) => c.unique())
    .execute();
  await db.schema.createIndex('agent_events_agent_at_idx').on('agent_events').columns(['agent_id', 'at']).execute();
  await ownedByUser(db, 'agent_events');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agent_events').ifExists().execute();
}
