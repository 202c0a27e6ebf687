import { createHmac } from 'node:crypto';
import { safeEqual } from '@agentyard/crypto';
import { decodeCursor, pageOf, pastPosition, positionAt, type AppDb, type WebhookSource } from '@agentyard/db';
import { BridgeErrors } from '../errors.ts';

/**
 * Checks `x-webhook-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`:
 * the MAC in constant time, the timestamp within `toleranceSeconds` of now (against replay).
 */
export function verifyWebhookSignature(
  header: string | undefined,
  rawBody: Buffer,
  secret: string,
  toleranceSeconds: number,
  now = Date.now(),
): void {
  const parts = new Map((header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !/^\d{1,12}$/.test(t) || !v1) throw BridgeErrors.badWebhookSignature();
  if (Math.abs(now / 1000 - Number(t)) > toleranceSeconds) throw BridgeErrors.badWebhookSignature();
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  if (!safeEqual(v1, expected)) throw BridgeErrors.badWebhookSignature();
}

/** Stores an event once per (source, id); a repeat is acknowledged as a duplicate and changes nothing. */
export async function storeWebhookEvent(db: AppDb, source: WebhookSource, event: { id: string; type: string }) {
  const row = await db
    .insertInto('webhook_events')
    .values({ source, event_id: event.id, event_type: event.type, payload: JSON.stringify(event) })
    .onConflict((oc) => oc.columns(['source', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return { received: true as const, duplicate: !row };
}

/** One page of the hosting-platform status events, newest first: (received_at, event_id) descending. */
export async function hostingStatusFeed(db: AppDb, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'text');
  if (page.cursor !== undefined && !after) throw BridgeErrors.invalidCursor();
  let query = db
    .selectFrom('webhook_events')
    .select(['event_id', 'event_type', 'payload', 'received_at', positionAt('received_at').as('page_at')])
    .where('source', '=', 'hosting-status');
  if (after) query = query.where(pastPosition('received_at', 'event_id', after, 'desc', 'text'));
  const rows = await query
    .orderBy('received_at', 'desc')
    .orderBy('event_id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: events, nextCursor } = pageOf(rows, page.limit, (r) => ({ at: r.page_at, id: r.event_id }));
  return {
    events: events.map((r) => ({
      id: r.event_id,
      type: r.event_type,
      receivedAt: r.received_at.toISOString(),
      payload: r.payload,
    })),
    nextCursor,
  };
}
