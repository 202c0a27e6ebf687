import { Type } from 'typebox';
import { Errors, IsoDate, Uuid } from './common.ts';
import { PageQuery } from './pagination.ts';
import { route } from './route.ts';

export const EvmAddress = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
/** A USDC amount as an exact decimal string: at most 6 decimals (USDC's precision). */
export const UsdcAmount = Type.String({ pattern: '^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,6})?$' });
/** The interface ignores these body fields: the user always comes from the caller's context. */
const IgnoredCallerFields = {
  userId: Type.Optional(Type.Unknown()),
  fromAddress: Type.Optional(Type.Unknown()),
};

export const CreateWalletBody = Type.Object({ agentId: Uuid, ...IgnoredCallerFields }, { additionalProperties: false });
export const Wallet = Type.Object({ address: EvmAddress, agentId: Uuid });
export const WalletParams = Type.Object({ address: EvmAddress });
export const WalletBalance = Type.Object({ address: EvmAddress, balance_usdc: Type.String() });

export const CreateEventBody = Type.Object(
  {
    agentId: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.String({ maxLength: 5000 }),
    venue: Type.String({ minLength: 1, maxLength: 500 }),
    eventDate: IsoDate,
    ticketPriceUsdc: UsdcAmount,
    totalTickets: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    ...IgnoredCallerFields,
  },
  { additionalProperties: false },
);

export const UndergroundEvent = Type.Object({
  id: Type.Integer(),
  agent_id: Uuid,
  name: Type.String(),
  description: Type.String(),
  venue: Type.String(),
  event_date: Type.String(),
  ticket_price_usdc: Type.String(),
  total_tickets: Type.Integer(),
});

export const SplitRecipient = Type.Object(
  {
    address: EvmAddress,
    share: Type.Number({ exclusiveMinimum: 0, maximum: 100 }),
  },
  { additionalProperties: false },
);

export const CreateSplitBody = Type.Object(
  {
    agentId: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    totalAmount: UsdcAmount,
    recipients: Type.Array(SplitRecipient, { maxItems: 100 }),
    ...IgnoredCallerFields,
  },
  { additionalProperties: false },
);
export const CreateSplitResponse = Type.Object({
  success: Type.Literal(true),
  splitId: Uuid,
  status: Type.Literal('completed'),
});

/** An agent's place on the bus: the wallet that signs for it and the webhook it receives messages on. */
export const BusEndpointParams = Type.Object({ agentId: Uuid });
export const BusEndpointBody = Type.Object(
  {
    walletAddress: EvmAddress,
    webhookUrl: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
  },
  { additionalProperties: false },
);
export const BusEndpoint = Type.Object({ agentId: Uuid, walletAddress: EvmAddress, webhookUrl: Type.String() });

/**
 * A bus message, signed by the wallet registered for the sending agent (an account, an ERC-1271
 * smart wallet, or an ERC-6492 counterfactual one). `signatureScheme` `eip712` (default): the
 * EIP-712 signature of `BusMessage{messageId, action, fromAgentId, toAgentId, payload, timestamp}`
 * where `payload` is the RFC 8785 canonical JSON of the payload object (domain: name `Agentyard Bus`,
 * version `1`, chainId). `eip191`: the personal_sign signature of the text `Agentyard Bus message`,
 * a newline, then the RFC 8785 canonical JSON of `{chainId, messageId, action, fromAgentId,
 * toAgentId, payload, timestamp}`.
 */
export const BusSendBody = Type.Object(
  {
    messageId: Type.String({ minLength: 1, maxLength: 200 }),
    action: Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,63}$' }),
    signature: Type.String({ pattern: '^0x([0-9a-fA-F]{2}){65,10000}$' }),
    signatureScheme: Type.Optional(Type.Union([Type.Literal('eip712'), Type.Literal('eip191')])),
    fromAgentId: Uuid,
    toAgentId: Uuid,
    payload: Type.Record(Type.String(), Type.Unknown()),
    timestamp: Type.Integer({ minimum: 0, maximum: 100_000_000_000 }),
    fromAddress: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export const BusSendResponse = Type.Object({ success: Type.Literal(true), messageId: Type.String() });

export const undergroundRoutes = {
  createWallet: route({
    method: 'POST',
    url: '/api/underground/wallets',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: "Create a wallet for one of the user's agents; the private key never leaves the service",
    schema: { body: CreateWalletBody, response: { 201: Wallet, ...Errors } },
  }),
  walletBalance: route({
    method: 'GET',
    url: '/api/underground/wallets/:address/balance',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: "USDC balance of one of the user's wallets on the configured chain, as an exact decimal string",
    schema: { params: WalletParams, response: { 200: WalletBalance, ...Errors } },
  }),
  listEvents: route({
    method: 'GET',
    url: '/api/underground/events',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary:
      "Events of the user's agents, newest event date first, in pages of `limit` (default 50, at most 100) from `cursor`; the body is the page (an array), the next page's cursor is the `x-next-cursor` header (absent on the last page)",
    schema: { querystring: PageQuery, response: { 200: Type.Array(UndergroundEvent), ...Errors } },
  }),
  createEvent: route({
    method: 'POST',
    url: '/api/underground/events',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: "Create an event for one of the user's agents",
    schema: { body: CreateEventBody, response: { 201: UndergroundEvent, ...Errors } },
  }),
  createSplit: route({
    method: 'POST',
    url: '/api/underground/splits',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Record a royalty split; shares sum to 100 and amounts are exact decimals',
    schema: { body: CreateSplitBody, response: { 200: CreateSplitResponse, ...Errors } },
  }),
  registerBusEndpoint: route({
    method: 'PUT',
    url: '/api/underground/agents/:agentId/bus',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Register the wallet that signs for an agent on the bus and the webhook it receives messages on',
    schema: { params: BusEndpointParams, body: BusEndpointBody, response: { 200: BusEndpoint, ...Errors } },
  }),
  busSend: route({
    method: 'POST',
    url: '/api/underground/bus/send',
    service: 'bridge',
    surfaces: ['backend'],
    auth: 'none',
    backendKey: false,
    rateLimit: 'backend-bus-send',
    summary: "Send a signed agent-to-agent message; delivered to the recipient agent's webhook",
    schema: { body: BusSendBody, response: { 200: BusSendResponse, ...Errors } },
  }),
};

/** The EIP-712 typed data every bus message is signed as (`payload`: RFC 8785 canonical JSON). */
export const BUS_MESSAGE_DOMAIN = { name: 'Agentyard Bus', version: '1' } as const;
export const BUS_MESSAGE_TYPES = {
  BusMessage: [
    { name: 'messageId', type: 'string' },
    { name: 'action', type: 'string' },
    { name: 'fromAgentId', type: 'string' },
    { name: 'toAgentId', type: 'string' },
    { name: 'payload', type: 'string' },
    { name: 'timestamp', type: 'uint256' },
  ],
} as const;
