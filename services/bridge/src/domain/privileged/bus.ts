// Bus send runs on the system connection: a message crosses users (sender and recipient agents
// belong to different users) and is authenticated by its signature, not by a user context.
import { createHash } from 'node:crypto';
import type { PublicClient } from 'viem';
import { currentPlan } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { fetchWithTimeout } from '@agentyard/http';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { BridgeErrors } from '../../errors.ts';
import type { BusQuota } from '../bus-quota.ts';
import { isSignedBy, type BusSignatureScheme, type SignedBusFields } from '../bus-signatures.ts';
import { DELIVER_JOB } from './bus-delivery.ts';

export interface BusMessage extends SignedBusFields {
  signature: string;
  signatureScheme?: BusSignatureScheme;
}

export interface BusContext {
  db: SystemDb;
  chain: PublicClient;
  chainId: number;
  queues: QueueSet;
  quota: BusQuota;
  /** Whose plan a sender's quota follows: SUBSCRIPTION_ACTIVE_STATUSES, and the ADMIN_EMAILS rule. */
  plans: { activeStatuses: readonly string[]; isAdmin: (email: string) => boolean };
  maxAgeSeconds: number;
  routing: { negotiationUrl?: string; amplificationUrl?: string; timeoutMs: number };
  now?: () => number;
}

/** BullMQ job ids: stable per message (so a message is queued once), without characters BullMQ refuses. */
export const deliveryJobId = (messageId: string) =>
  `bus-${createHash('sha256').update(messageId).digest('hex').slice(0, 40)}`;

function routeFor(action: string, routing: BusContext['routing']): { service: string; url: string | undefined } | null {
  if (action.startsWith('BOOKING_')) return { service: 'Negotiation', url: routing.negotiationUrl };
  if (action.startsWith('AMPLIFY_')) return { service: 'Amplification', url: routing.amplificationUrl };
  return null;
}

async function routeMessage(message: BusMessage, routing: BusContext['routing']): Promise<unknown> {
  const target = routeFor(message.action, routing);
  if (!target) return null;
  if (!target.url) throw BridgeErrors.routingNotConfigured(target.service);
  const { signature: _signature, ...content } = message;
  try {
    const res = await fetchWithTimeout(target.url, {
      method: 'POST',
      timeoutMs: routing.timeoutMs,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(content),
    });
    if (!res.ok) throw new Error(`status ${res.status}`);
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  } catch {
    throw BridgeErrors.routingFailed(target.service);
  }
}

/**
 * Verifies, records and queues a bus message. The message id is the replay guard (its row is
 * inserted once); the signed timestamp bounds how long a captured message stays usable.
 */
export async function sendBusMessage(context: BusContext, message: BusMessage) {
  const sender = await context.db
    .selectFrom('bus_endpoints')
    .innerJoin('users', 'users.id', 'bus_endpoints.user_id')
    .select(['bus_endpoints.signer_address', 'bus_endpoints.user_id', 'users.email'])
    .where('bus_endpoints.agent_id', '=', message.fromAgentId)
    .executeTakeFirst();
  if (!sender || !(await isSignedBy(context.chain, context.chainId, message, sender.signer_address)))
    throw BridgeErrors.invalidSignature();
  const now = context.now?.() ?? Date.now();
  if (Math.abs(now / 1000 - message.timestamp) > context.maxAgeSeconds) throw BridgeErrors.staleMessage();
  const recipient = await context.db
    .selectFrom('bus_endpoints')
    .select('agent_id')
    .where('agent_id', '=', message.toAgentId)
    .executeTakeFirst();
  if (!recipient) throw BridgeErrors.recipientNotOnBus();

  // Counted per sending user and day before the message is recorded; given back when it is not kept.
  const plan = await currentPlan(context.db, sender.user_id, {
    admin: context.plans.isAdmin(sender.email),
    activeStatuses: context.plans.activeStatuses,
  });
  const unit = await context.quota.take(sender.user_id, plan ?? 'solo');
  const inserted = await context.db
    .insertInto('bus_messages')
    .values({
      message_id: message.messageId,
      user_id: sender.user_id,
      from_agent_id: message.fromAgentId,
      to_agent_id: message.toAgentId,
      action: message.action,
      payload: JSON.stringify(message.payload),
      signed_at: new Date(message.timestamp * 1000),
      signature: message.signature,
    })
    .onConflict((oc) => oc.column('message_id').doNothing())
    .returning('message_id')
    .executeTakeFirst()
    .catch(async (error: unknown) => {
      await unit.release();
      throw error;
    });
  if (!inserted) {
    await unit.release();
    throw BridgeErrors.messageReplayed();
  }

  // A message that could not be routed or queued is forgotten, so the sender may retry it as is.
  const forget = async () => {
    await context.db.deleteFrom('bus_messages').where('message_id', '=', message.messageId).execute();
    await unit.release();
  };
  try {
    const routing = await routeMessage(message, context.routing);
    if (routing !== null)
      await context.db
        .updateTable('bus_messages')
        .set({ routing: JSON.stringify(routing) })
        .where('message_id', '=', message.messageId)
        .execute();
    await context.queues.add(
      QUEUES.busDelivery,
      DELIVER_JOB,
      { messageId: message.messageId },
      { jobId: deliveryJobId(message.messageId) },
    );
  } catch (error) {
    await forget();
    throw error;
  }
  return { success: true as const, messageId: message.messageId };
}
