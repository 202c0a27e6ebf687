import {
  decodeCursor,
  pageOf,
  pastPosition,
  positionAt,
  type Selectable,
  type UndergroundEventsTable,
  type UserTx,
} from '@agentyard/db';
import { BridgeErrors } from '../errors.ts';
import { requireOwnAgent } from './agent-ownership.ts';

export interface NewEvent {
  agentId: string;
  name: string;
  description: string;
  venue: string;
  eventDate: string;
  ticketPriceUsdc: string;
  totalTickets: number;
}

const COLUMNS = [
  'id',
  'agent_id',
  'name',
  'description',
  'venue',
  'event_date',
  'ticket_price_usdc',
  'total_tickets',
] as const;

function toEvent(row: Pick<Selectable<UndergroundEventsTable>, (typeof COLUMNS)[number]>) {
  return { ...row, id: Number(row.id), event_date: new Date(row.event_date).toISOString() };
}

export async function createEvent(trx: UserTx, userId: string, event: NewEvent) {
  await requireOwnAgent(trx, event.agentId);
  const row = await trx
    .insertInto('underground_events')
    .values({
      user_id: userId,
      agent_id: event.agentId,
      name: event.name,
      description: event.description,
      venue: event.venue,
      event_date: event.eventDate,
      ticket_price_usdc: event.ticketPriceUsdc,
      total_tickets: event.totalTickets,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toEvent(row);
}

/** One page of the events of the user's agents (row-level security scopes them), newest event date first: (event_date, id) descending. */
export async function listEvents(trx: UserTx, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'bigint');
  if (page.cursor !== undefined && !after) throw BridgeErrors.invalidCursor();
  let query = trx.selectFrom('underground_events').select([...COLUMNS, positionAt('event_date').as('page_at')]);
  if (after) query = query.where(pastPosition('event_date', 'id', after, 'desc', 'bigint'));
  const rows = await query
    .orderBy('event_date', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: events, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: String(row.id) }));
  return { events: events.map(({ page_at: _, ...row }) => toEvent(row)), nextCursor };
}
