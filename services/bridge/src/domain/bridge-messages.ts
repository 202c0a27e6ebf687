import {
  decodeCursor,
  encodeCursor,
  sql,
  withTransactionLock,
  type AppDb,
  type BridgeChannel,
  type BridgePriority,
  type PagePosition,
} from '@agentyard/db';
import { BridgeErrors } from '../errors.ts';

export const CHANNELS: BridgeChannel[] = ['general', 'tasks', 'alerts'];
/** The reader name that reads without marking anything read. */
export const ANONYMOUS_READER = 'unknown';
const DEFAULT_WINDOW_MS = 24 * 3600_000;

export function allowedSenders(operatorIdentity: string): string[] {
  return ['atlas-main', 'atlas-agentyard', ...(operatorIdentity ? [operatorIdentity] : [])];
}

export interface NewBridgeMessage {
  sender?: string;
  content?: string;
  channel?: BridgeChannel;
  priority?: BridgePriority;
}

export async function sendBridgeMessage(db: AppDb, senders: readonly string[], message: NewBridgeMessage) {
  const { sender, content } = message;
  if (!sender || !content?.trim()) throw BridgeErrors.senderAndContentRequired();
  if (!senders.includes(sender)) throw BridgeErrors.invalidSender();
  const row = await db
    .insertInto('bridge_messages')
    .values({ sender, content, channel: message.channel ?? 'general', priority: message.priority ?? 'normal' })
    .returning(['id', 'sender', 'channel', 'priority', 'created_at'])
    .executeTakeFirstOrThrow();
  return { ...row, id: Number(row.id), created_at: row.created_at.toISOString() };
}

export interface InboxQuery {
  channel?: BridgeChannel;
  since?: string;
  reader?: string;
  limit?: number;
  cursor?: string;
}

interface InboxRow {
  id: string;
  sender: string;
  channel: BridgeChannel;
  priority: BridgePriority;
  content: string;
  created_at: string;
  page_at: string;
  more?: boolean;
}

// The database writes created_at in the response's own ISO 8601 form: no Date parsed and formatted again per row.
const CREATED_AT_ISO = sql`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
// A page's position keeps the microseconds the order is by.
const PAGE_AT = sql`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The reader's unread messages of a channel since `since`, oldest first, marked read in the same
 * statement. What a reader has read is kept as ranges of the channel's order (created_at, id)
 * (bridge_read_ranges): the read walks the stretches between them and widens one range over what
 * it returned. Readers of the same name take turns (a lock on (channel, reader)), so each message
 * reaches each reader once. Ranges stay exact because a channel's messages are inserted in order
 * (the bridge_messages_in_channel_order trigger): no message can appear later inside a range.
 */
export async function readInbox(db: AppDb, query: InboxQuery) {
  const channel = query.channel ?? 'general';
  const since = query.since ? new Date(query.since) : new Date(Date.now() - DEFAULT_WINDOW_MS);
  const reader = query.reader ?? ANONYMOUS_READER;
  const limit = query.limit ?? 50;
  // A cursor continues after the last message of the page before ("after (since, 0)" without one).
  const after =
    query.cursor === undefined ? { at: since.toISOString(), id: '0' } : decodeCursor(query.cursor, 'bigint');
  if (!after) throw BridgeErrors.invalidCursor();
  const { rows } =
    reader === ANONYMOUS_READER
      ? await sql<InboxRow>`
        select id, sender, channel, priority, content, ${CREATED_AT_ISO} as created_at, ${PAGE_AT} as page_at from bridge_messages
        where channel = ${channel} and created_at >= ${since} and (created_at, id) > (${after.at}::timestamptz, ${after.id}::bigint)
        order by bridge_messages.created_at, id limit ${limit + 1}`.execute(db)
      : await withTransactionLock(db, `bridge inbox:${channel}:${reader}`, (trx) =>
          markingRead(channel, reader, since, after, limit).execute(trx),
        );
  // The anonymous read fetched one row more than the page; the marking read says whether more are unread.
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const more = rows.length > limit || rows[0]?.more === true;
  const messages = page.map(({ page_at: _, more: __, ...m }) => ({ ...m, id: Number(m.id) }));
  return {
    ok: true as const,
    channel,
    count: messages.length,
    messages,
    nextCursor: more && last ? encodeCursor({ at: last.page_at, id: last.id }) : null,
  };
}

/**
 * One statement: the oldest `limit` messages after `after` (since, or a cursor) outside the
 * reader's ranges, whether more are unread, and the ranges updated: the one range from `after` to
 * the last message returned, absorbing every range it overlaps (there is nothing unread in
 * between, or it would have been returned).
 */
function markingRead(channel: BridgeChannel, reader: string, since: Date, after: PagePosition, limit: number) {
  // Keys are (created_at, id); ids are positive, so "after (since, 0)" is "created_at >= since".
  return sql<InboxRow>`
    with start as (
      select at, id from (values (${since}::timestamptz, 0::bigint), (${after.at}::timestamptz, ${after.id}::bigint)) as v(at, id)
      order by at desc, id desc limit 1
    ), ranges as (
      select id, lo_at, lo_id, hi_at, hi_id from bridge_read_ranges
      where channel = ${channel} and reader = ${reader} and (hi_at, hi_id) > (select at, id from start)
    ), gaps as (
      -- The unread stretches: from the start to the first range, then from each range to the next one.
      select after_at, after_id,
             lead(lo_at, 1, 'infinity') over bounds as before_at, lead(lo_id, 1, 0::bigint) over bounds as before_id
      from (select at as after_at, id as after_id, '-infinity'::timestamptz as lo_at, 0::bigint as lo_id from start
            union all select hi_at, hi_id, lo_at, lo_id from ranges) as edges
      window bounds as (order by lo_at, lo_id)
    ), candidates as (
      select m.* from gaps cross join lateral (
        select id, sender, channel, priority, content, created_at from bridge_messages
        where channel = ${channel} and (created_at, id) > (gaps.after_at, gaps.after_id) and (created_at, id) < (gaps.before_at, gaps.before_id)
        order by created_at, id limit ${limit + 1}
      ) m
      order by m.created_at, m.id limit ${limit + 1}
    ), unread as (
      select * from candidates order by created_at, id limit ${limit}
    ), last as (
      select created_at as at, id from unread order by created_at desc, id desc limit 1
    ), absorbed as (
      select ranges.id, lo_at, lo_id, hi_at, hi_id from ranges, last where (ranges.lo_at, ranges.lo_id) <= (last.at, last.id)
    ), widened as (
      select lo.at as lo_at, lo.id as lo_id, hi.at as hi_at, hi.id as hi_id
      from (select at, id from (select at, id from start union all select lo_at, lo_id from absorbed) b order by at, id limit 1) lo,
           (select at, id from (select at, id from last union all select hi_at, hi_id from absorbed) b order by at desc, id desc limit 1) hi,
           last
    ), kept as (
      select min(id) as id from absorbed
    ), updated as (
      update bridge_read_ranges r set lo_at = w.lo_at, lo_id = w.lo_id, hi_at = w.hi_at, hi_id = w.hi_id
      from widened w, kept where r.id = kept.id
    ), deleted as (
      delete from bridge_read_ranges where id in (select id from absorbed) and id > (select id from kept)
    ), inserted as (
      insert into bridge_read_ranges (channel, reader, lo_at, lo_id, hi_at, hi_id)
      select ${channel}, ${reader}, lo_at, lo_id, hi_at, hi_id from widened where (select id from kept) is null
    )
    select id, sender, channel, priority, content, ${CREATED_AT_ISO} as created_at, ${PAGE_AT} as page_at,
           (select count(*) from candidates) > ${limit} as more
    from unread order by unread.created_at, unread.id`;
}

export async function bridgeHealth(db: AppDb, senders: readonly string[]) {
  const total = await db
    .selectFrom('bridge_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const last = await db
    .selectFrom('bridge_messages')
    .select(['created_at', 'sender', 'channel'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    status: 'ok' as const,
    total_messages: Number(total.n),
    last_message: last ? { ...last, created_at: last.created_at.toISOString() } : null,
    channels: CHANNELS,
    senders: [...senders],
    timestamp: new Date().toISOString(),
  };
}
