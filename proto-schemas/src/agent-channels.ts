import { Type } from 'typebox';
import { ErrorBody, Errors, Uuid } from './common.ts';
import { route, type RouteSpec } from './route.ts';

// ── An agent's messaging channels (issue 29): credentials go into the platform's vault, never come back ──
export const ChannelName = Type.String({
  pattern: '^[a-z][a-z0-9-]{0,31}$',
  description: "OpenClaw's channel id: telegram (discord, matrix, msteams, slack, whatsapp answer 501 with why)",
});
export const ChannelsParams = Type.Object({ id: Uuid });
export const ChannelParams = Type.Object({ id: Uuid, channel: ChannelName });
export const DmPolicy = Type.Union([
  Type.Literal('pairing'),
  Type.Literal('allowlist'),
  Type.Literal('open'),
  Type.Literal('disabled'),
]);
/**
 * A channel's credentials under OpenClaw's own config names (Telegram: `botToken`) and its settings.
 * Credentials given replace the stored ones (a rotation); none given keeps them (settings only).
 */
export const ConnectChannelBody = Type.Object(
  {
    botToken: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Telegram: the token BotFather gave (write-only: never answered back)',
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'default true' })),
    dmPolicy: Type.Optional(DmPolicy),
    allowFrom: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^(\\*|[A-Za-z0-9_@:+-]{1,64})$' }), {
        maxItems: 200,
      }),
    ),
  },
  { additionalProperties: false },
);
export const ChannelStatus = Type.Union([
  Type.Literal('connected'),
  Type.Literal('connecting'),
  Type.Literal('error'),
  Type.Literal('off'),
]);
export const AgentChannel = Type.Object({
  channel: Type.String(),
  enabled: Type.Boolean(),
  /** From the agent gateway's own channel status (`channels.status`). */
  status: ChannelStatus,
  detail: Type.String(),
  /** At most the last 4 characters of the credential. */
  credentialHint: Type.String({ maxLength: 4 }),
  dmPolicy: Type.Optional(DmPolicy),
  allowFrom: Type.Optional(Type.Array(Type.String())),
});
export const AgentChannels = Type.Object({ channels: Type.Array(AgentChannel) });
export const ChannelConnected = Type.Object({ success: Type.Literal(true), channel: AgentChannel });
export const ChannelDisconnected = Type.Object({
  success: Type.Literal(true),
  channel: Type.String(),
  disconnected: Type.Boolean(),
});

/** The owner's, on the web only (session or user key); anyone else's agent is 404. */
const owners = {
  service: 'agents',
  surfaces: ['web'],
  auth: 'user',
  rateLimit: 'web-gateway',
} satisfies Partial<RouteSpec>;

export const agentChannelRoutes = {
  agentChannels: route({
    ...owners,
    method: 'GET',
    url: '/api/agents/:id/channels',
    summary:
      "The agent's connected channels with their live status from its gateway (never a credential: at most its last 4 characters)",
    schema: { params: ChannelsParams, response: { 200: AgentChannels, ...Errors } },
  }),
  connectChannel: route({
    ...owners,
    method: 'PUT',
    url: '/api/agents/:id/channels/:channel',
    summary:
      "Connect a channel (or rotate its credentials, or change its settings): sealed into the agent's vault, applied by rebuilding its container",
    schema: {
      params: ChannelParams,
      body: ConnectChannelBody,
      response: { 200: ChannelConnected, 501: ErrorBody, ...Errors },
    },
  }),
  disconnectChannel: route({
    ...owners,
    method: 'DELETE',
    url: '/api/agents/:id/channels/:channel',
    summary: 'Disconnect a channel: its credentials leave the vault and the agent stops using it',
    schema: { params: ChannelParams, response: { 200: ChannelDisconnected, ...Errors } },
  }),
};
