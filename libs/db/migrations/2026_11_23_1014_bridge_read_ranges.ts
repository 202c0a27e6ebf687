import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// Inbox read markers as ranges instead of one row per (reader, message). The inbox returns a
// reader's oldest unread messages, so what a reader has read is a few stretches of the channel's
// order (created_at, id): a range row says "every message of the channel whose key lies in
// [lo, hi] is read by this reader". An inbox read jumps over those ranges instead of checking every
// read message one by one, and marks what it returned by widening one range (one row, not 100).
//
// A range is only exact if no message can later appear inside it. So the messages of a channel
// are inserted in order: each insert takes a per-channel transaction lock (held until commit,
// released only after the commit is visible) and places its created_at after the channel's latest
// (plus 1 µs when the clock says otherwise). Any snapshot then sees a prefix of each channel's
// order: a message committed later always sorts after every message visible now.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function bridge_messages_in_channel_order() returns trigger
    language plpgsql set search_path = public, pg_temp as $$
    declare
      latest timestamptz;
    begin
      if current_setting('transaction_isolation') <> 'read committed' then
        -- Under a transaction snapshot the lookup below could miss the insert committed just before.
        raise exception 'bridge messages are inserted in read committed transactions';
      end if;
      perform pg_advisory_xact_lock(hashtextextended('bridge_messages:' || new.channel, 0));
      select created_at into latest from bridge_messages where channel = new.channel order by created_at desc, id desc limit 1;
      if latest is not null and new.created_at <= latest then
        new.created_at := latest + interval '1 microsecond';
      end if;
      return new;
    end
    $$`.execute(db);
  await sql`create trigger bridge_messages_in_channel_order before insert on bridge_messages
    for each row execute function bridge_messages_in_channel_order()`.execute(db);
  await sql`
    create function bridge_messages_keep_their_place() returns trigger
    language plpgsql set search_path = public, pg_temp as $$
    begin
      raise exception 'a bridge message keeps its channel and created_at';
    end
    $$`.execute(db);
  await sql`create trigger bridge_messages_keep_their_place before update of channel, created_at on bridge_messages
    for each row when (new.channel is distinct from old.channel or new.created_at is distinct from old.created_at)
    execute function bridge_messages_keep_their_place()`.execute(db);

  // Widened in place on every marking read: room on the page keeps those updates HOT.
  await db.schema.createTable('bridge_read_ranges')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('general', 'tasks', 'alerts')`))
    .addColumn('reader', 'text', (c) => c.notNull())
    .addColumn('lo_at', 'timestamptz', (c) => c.notNull())
    .addColumn('lo_id', 'bigint', (c) => c.notNull())
    .addColumn('hi_at', 'timestamptz', (c) => c.notNull())
    .addColumn('hi_id', 'bigint', (c) => c.notNull())
    .addCheckConstraint('bridge_read_ranges_bounds', sql`(lo_at, lo_id) <= (hi_at, hi_id)`)
    .modifyEnd(sql`with (fillfactor = 50)`)
    .execute();
  await db.schema.createIndex('bridge_read_ranges_reader_idx').on('bridge_read_ranges').columns(['channel', 'reader']).execute();

  // Existing markers become ranges: each run of consecutive messages a reader has read, one range.
  await sql`
    with positioned as (
      select id, channel, created_at, row_number() over (partition by channel order by created_at, id) as position
      from bridge_messages
    ), marked as (
      select p.channel, r.reader, p.position,
             p.position - row_number() over (partition by p.channel, r.reader order by p.position) as run
      from bridge_reads r join positioned p on p.id = r.message_id
    ), runs as (
      select channel, reader, min(position) as first, max(position) as last from marked group by channel, reader, run
    )
    insert into bridge_read_ranges (channel, reader, lo_at, lo_id, hi_at, hi_id)
    select runs.channel, runs.reader, lo.created_at, lo.id, hi.created_at, hi.id
    from runs
    join positioned lo on lo.channel = runs.channel and lo.position = runs.first
    join positioned hi on hi.channel = runs.channel and hi.position = runs.last`.execute(db);
  await db.schema.dropTable('bridge_reads').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('bridge_reads')
    .addColumn('reader', 'text', (c) => c.notNull())
    .addColumn('message_id', 'bigint', (c) => c.notNull())
    .addColumn('read_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('bridge_reads_pkey', ['reader', 'message_id'])
    .execute();
  await sql`
    insert into bridge_reads (reader, message_id)
    select distinct r.reader, m.id from bridge_read_ranges r
    join bridge_messages m on m.channel = r.channel and (m.created_at, m.id) between (r.lo_at, r.lo_id) and (r.hi_at, r.hi_id)`.execute(db);
  await db.schema.dropTable('bridge_read_ranges').execute();
  await sql`drop trigger bridge_messages_keep_their_place on bridge_messages`.execute(db);
  await sql`drop function bridge_messages_keep_their_place()`.execute(db);
  await sql`drop trigger bridge_messages_in_channel_order on bridge_messages`.execute(db);
  await sql`drop function bridge_messages_in_channel_order()`.execute(db);
}
