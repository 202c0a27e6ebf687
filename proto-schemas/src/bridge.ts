import { Type } from 'typebox';
import { Errors, IsoDate, Nullable } from './common.ts';
import { NextCursor, PageCursor, PageQuery } from './pagination.ts';
import { route } from './route.ts';

export const BridgeChannel = Type.Union([Type.Literal('general'), Type.Literal('tasks'), Type.Literal('alerts')]);
export const BridgePriority = Type.Union([Type.Literal('normal'), Type.Literal('urgent'), Type.Literal('fyi')]);

/** `sender` and `content` are checked by the service, which answers with the interface's own messages. */
export const BridgeSendBody = Type.Object(
  {
    sender: Type.Optional(Type.String({ maxLength: 100 })),
    content: Type.Optional(Type.String({ maxLength: 20000 })),
    channel: Type.Optional(BridgeChannel),
    priority: Type.Optional(BridgePriority),
  },
  { additionalProperties: false },
);

export const BridgeMessage = Type.Object({
  id: Type.Integer(),
  sender: Type.String(),
  channel: BridgeChannel,
  content: Type.String(),
  priority: BridgePriority,
  created_at: Type.String(),
});

export const BridgeSendResponse = Type.Object({
  ok: Type.Literal(true),
  message: Type.Object({
    id: Type.Integer(),
    sender: Type.String(),
    channel: BridgeChannel,
    priority: BridgePriority,
    created_at: Type.String(),
  }),
});

export const BridgeInboxQuery = Type.Object(
  {
    channel: Type.Optional(BridgeChannel),
    since: Type.Optional(IsoDate),
    reader: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(PageCursor),
  },
  { additionalProperties: false },
);

export const BridgeInboxResponse = Type.Object({
  ok: Type.Literal(true),
  channel: BridgeChannel,
  count: Type.Integer(),
  messages: Type.Array(BridgeMessage),
  /** Continue after this page (the reader's unread ones, or every one for `unknown`); null: nothing more now. */
  nextCursor: NextCursor,
});

export const BridgeHealthResponse = Type.Object({
  status: Type.Literal('ok'),
  total_messages: Type.Integer(),
  last_message: Nullable(Type.Object({ created_at: Type.String(), sender: Type.String(), channel: BridgeChannel })),
  channels: Type.Array(Type.String()),
  senders: Type.Array(Type.String()),
  timestamp: Type.String(),
});
export const BridgeHealthError = Type.Object({ status: Type.Literal('error'), error: Type.String() });

export const bridgeRoutes = {
  send: route({
    method: 'POST',
    url: '/api/bridge/send',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Post a message on the operator bridge (allowed senders only)',
    schema: { body: BridgeSendBody, response: { 200: BridgeSendResponse, ...Errors } },
  }),
  inbox: route({
    method: 'GET',
    url: '/api/bridge/inbox',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary:
      'Unread messages of a channel for a reader, oldest first, `limit` (default 50, at most 100) a page, continuing after `cursor`; marks them read for that reader',
    schema: { querystring: BridgeInboxQuery, response: { 200: BridgeInboxResponse, ...Errors } },
  }),
  health: route({
    method: 'GET',
    url: '/api/bridge/health',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Bridge message counts and the latest message',
    schema: { response: { 200: BridgeHealthResponse, ...Errors, 500: BridgeHealthError } },
  }),
};

// Inbound provider webhooks, served by the bridge service.

/**
 * An inbound provider event. Signed with `x-webhook-signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256(secret, "<t>.<raw body>")>`; the timestamp must be within the tolerance.
 */
export const WebhookEventBody = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: true },
);
export const ProviderWebhookReceipt = Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() });
export const StoredWebhookEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  receivedAt: Type.String(),
  payload: Type.Unknown(),
});
export const HostingStatusFeed = Type.Object({ events: Type.Array(StoredWebhookEvent), nextCursor: NextCursor });

export const webhookRoutes = {
  livestream: route({
    method: 'POST',
    url: '/api/webhooks/livestream',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Live-stream provider events (HMAC-signed, idempotent by event id)',
    schema: { body: WebhookEventBody, response: { 200: ProviderWebhookReceipt, ...Errors } },
  }),
  hostingStatus: route({
    method: 'POST',
    url: '/api/webhooks/hosting-status',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Hosting-platform status events (HMAC-signed, idempotent by event id)',
    schema: { body: WebhookEventBody, response: { 200: ProviderWebhookReceipt, ...Errors } },
  }),
  hostingStatusFeed: route({
    method: 'GET',
    url: '/api/webhooks/hosting-status',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'admin',
    summary:
      'The hosting-platform status events, newest first, in pages of `limit` (default 50, at most 100) from `cursor`',
    schema: { querystring: PageQuery, response: { 200: HostingStatusFeed, ...Errors } },
  }),
};
