import type { Selectable, UndergroundEventsTable, UserTx } from '@agentyard/db';
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

const COLUMNS = ['id', 'agent_id', 'name', 'description', 'venue', 'event_date', 'ticket_price_usdc', 'total_tickets'] as const;

function toEvent(row: Pick<Selectable<UndergroundEventsTable>, (typeof COLUMNS)[number]>) {
  return { ...row, id: Number(row.id), event_date: new Date(row.event_date).toISOString() };
}

export async function createEvent(trx: UserTx, userId: string, event: NewEvent) {
  await requireOwnAgent(trx, event.agentId);
  const row = await trx.insertInto('underground_events').values({
    user_id: userId, agent_id: event.agentId, name: event.name, description: event.description, venue: event.venue,
    event_date: event.eventDate, ticket_price_usdc: event.ticketPriceUsdc, total_tickets: event.totalTickets,
  }).returning(COLUMNS).executeTakeFirstOrThrow();
  return toEvent(row);
}

/** Events of the user's agents (row-level security scopes them), newest event date first. */
export async function listEvents(trx: UserTx) {
  const rows = await trx.selectFrom('underground_events').select(COLUMNS).orderBy('event_date', 'desc').orderBy('id', 'desc').limit(1000).execute();
  return rows.map(toEvent);
}
