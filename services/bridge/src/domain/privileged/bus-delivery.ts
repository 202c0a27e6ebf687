import { fetch } from 'undici';
import type { SystemDb } from '@agentyard/db/system';
import { UnrecoverableError, type Job } from '@agentyard/queue';
import { BlockedAddressError, checkLiteralHost, guardedDispatcher, parseAllowList } from '../delivery-guard.ts';

/** The bus-delivery queue's one job name. */
export const DELIVER_JOB = 'deliver';

export interface DeliveryJob {
  messageId: string;
}

export interface DeliveryOptions {
  db: SystemDb;
  timeoutMs: number;
  allowedAddresses: string;
}

/**
 * Delivers a stored bus message to the recipient agent's webhook. Idempotent: a delivered message
 * is not sent again. Refused targets and redirects fail for good; other failures are retried.
 */
export function busDeliveryProcessor(options: DeliveryOptions) {
  const allowList = parseAllowList(options.allowedAddresses);
  const dispatcher = guardedDispatcher(allowList, options.timeoutMs);
  const fail = async (messageId: string, reason: string) => {
    await options.db
      .updateTable('bus_messages')
      .set({ delivery_error: reason })
      .where('message_id', '=', messageId)
      .execute();
  };

  const process = async (job: Job<DeliveryJob>) => {
    const { messageId } = job.data;
    const message = await options.db
      .selectFrom('bus_messages')
      .innerJoin('bus_endpoints', 'bus_endpoints.agent_id', 'bus_messages.to_agent_id')
      .select([
        'message_id',
        'action',
        'from_agent_id',
        'to_agent_id',
        'payload',
        'signed_at',
        'signature',
        'routing',
        'delivered_at',
        'webhook_url',
      ])
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    if (!message) throw new UnrecoverableError('message or recipient endpoint no longer exists');
    if (message.delivered_at) return { delivered: true, again: false };
    await options.db
      .updateTable('bus_messages')
      .set((eb) => ({ delivery_attempts: eb('delivery_attempts', '+', 1) }))
      .where('message_id', '=', messageId)
      .execute();

    const url = new URL(message.webhook_url);
    let status: number;
    try {
      checkLiteralHost(url, allowList);
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        dispatcher,
        signal: AbortSignal.timeout(options.timeoutMs),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          messageId: message.message_id,
          action: message.action,
          fromAgentId: message.from_agent_id,
          toAgentId: message.to_agent_id,
          payload: message.payload,
          timestamp: Math.floor(new Date(message.signed_at).getTime() / 1000),
          signature: message.signature,
          routing: message.routing,
        }),
      });
      status = res.status;
      await res.body?.cancel();
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (error instanceof BlockedAddressError || cause instanceof BlockedAddressError) {
        await fail(messageId, 'webhook address refused');
        throw new UnrecoverableError('webhook address refused');
      }
      await fail(messageId, 'webhook unreachable');
      throw new Error('webhook unreachable');
    }
    if (status >= 300 && status < 400) {
      await fail(messageId, `webhook redirected (${status}); redirects are not followed`);
      throw new UnrecoverableError('webhook redirected');
    }
    if (status < 200 || status >= 300) {
      await fail(messageId, `webhook answered ${status}`);
      throw new Error(`webhook answered ${status}`);
    }
    await options.db
      .updateTable('bus_messages')
      .set({ delivered_at: new Date(), delivery_error: null })
      .where('message_id', '=', messageId)
      .execute();
    return { delivered: true, again: false };
  };
  return { process, close: () => dispatcher.close() };
}
