import { HttpError } from '@agentyard/http';

/** Every error the bridge service answers with, named once. */
export const BridgeErrors = {
  senderAndContentRequired: () => new HttpError(400, 'sender and content are required'),
  invalidSender: () => new HttpError(400, 'invalid sender'),
  userContextRequired: () => new HttpError(401, 'User context required (x-user-id, x-user-email)'),
  agentNotOwned: () => new HttpError(403, 'Agent does not belong to this user'),
  walletNotFound: () => new HttpError(404, 'Wallet not found'),
  invalidAddress: () => new HttpError(400, 'Invalid address checksum'),
  emptyRecipients: () => new HttpError(400, 'recipients must not be empty'),
  totalNotPositive: () => new HttpError(400, 'totalAmount must be greater than 0'),
  sharesNot100: () => new HttpError(400, 'Recipient shares must sum to 100'),
  chainUnavailable: () => new HttpError(502, 'Chain RPC unavailable'),
  invalidSignature: () => new HttpError(401, 'Invalid signature'),
  staleMessage: () => new HttpError(401, 'Message timestamp is outside the accepted window'),
  messageReplayed: () => new HttpError(409, 'messageId already used'),
  recipientNotOnBus: () => new HttpError(404, 'Recipient agent has no bus endpoint'),
  routingNotConfigured: (service: string) => new HttpError(503, `${service} service not configured`),
  routingFailed: (service: string) => new HttpError(502, `${service} service unavailable`),
  dailyLimitReached: (plan: string, limit: number) =>
    new HttpError(
      429,
      `Daily agent-to-agent message limit reached: ${limit} per day on the ${plan} plan`,
      'DAILY_MESSAGE_LIMIT',
    ),
  quotaUnavailable: () => new HttpError(503, 'Message quota unavailable'),
  webhookNotConfigured: () => new HttpError(503, 'Webhook receiver not configured'),
  badWebhookSignature: () => new HttpError(400, 'Invalid webhook signature'),
  noLinkedWallet: () =>
    new HttpError(404, 'No wallet is linked: sign in with a wallet, or pass ?address=', 'NO_LINKED_WALLET'),
  notSupported: (reason: string) => new HttpError(501, reason, 'NOT_SUPPORTED'),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
};
