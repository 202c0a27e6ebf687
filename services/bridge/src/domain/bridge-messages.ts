import { sql, type AppDb, type BridgeChannel, type BridgePriority } from '@agentyard/db';
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
  const row = await db.insertInto('bridge_messages')
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
}

interface InboxRow { id: string; sender: string; channel: BridgeChannel; priority: BridgePriority; content: string; created_at: string }

// The database writes created_at in the response's own ISO 8601 form: no Date parsed and formatted again per row.
const CREATED_AT_ISO = sql`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The reader's unread messages of a channel, oldest first, marked read in the same statement. The
 * (reader, message) key decides races: when readers with the same name overlap, each message goes
 * to the one whose marker was inserted, never to both and never to neither.
 */
export async function readInbox(db: AppDb, query: InboxQuery) {
  const channel = query.channel ?? 'general';
  const since = query.since ? new Date(query.since) : new Date(Date.now() - DEFAULT_WINDOW_MS);
  const reader = query.reader ?? ANONYMOUS_READER;
  const limit = query.limit ?? 50;
  const { rows } = reader === ANONYMOUS_READER
    ? await sql<InboxRow>`
        select id, sender, channel, priority, content, ${CREATED_AT_ISO} as created_at from bridge_messages
        where channel = ${channel} and created_at >= ${since}
        order by bridge_messages.created_at, id limit ${limit}`.execute(db)
    : await sql<InboxRow>`
        with unread as (
          select m.id, m.sender, m.channel, m.priority, m.content, m.created_at from bridge_messages m
          where m.channel = ${channel} and m.created_at >= ${since}
            and not exists (select 1 from bridge_reads r where r.reader = ${reader} and r.message_id = m.id)
          order by m.created_at, m.id limit ${limit}
        ), marked as (
          insert into bridge_reads (reader, message_id) select ${reader}, id from unread
          on conflict do nothing returning message_id
        )
        select u.id, u.sender, u.channel, u.priority, u.content, ${CREATED_AT_ISO} as created_at
        from unread u join marked k on k.message_id = u.id
        order by u.created_at, u.id`.execute(db);
  const messages = rows.map((m) => ({ ...m, id: Number(m.id) }));
  return { ok: true as const, channel, count: messages.length, messages };
}

export async function bridgeHealth(db: AppDb, senders: readonly string[]) {
  const total = await db.selectFrom('bridge_messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const last = await db.selectFrom('bridge_messages').select(['created_at', 'sender', 'channel']).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return {
    status: 'ok' as const,
    total_messages: Number(total.n),
    last_message: last ? { ...last, created_at: last.created_at.toISOString() } : null,
    channels: CHANNELS,
    senders: [...senders],
    timestamp: new Date().toISOString(),
  };
}
