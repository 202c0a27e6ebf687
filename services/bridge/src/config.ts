import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

export const bridgeSettings = {
  BRIDGE_OPERATOR_IDENTITY: Type.String({
    default: '',
    maxLength: 100,
    description:
      'the operator identity allowed to send on the bridge besides atlas-main and atlas-agentyard; empty: none',
  }),
  ENCRYPTION_KEYS: Secret({
    minLength: 1,
    description: 'keyring sealing wallet private keys at rest: id:base64key,... (first is current)',
  }),
  UNDERGROUND_RPC_URL: Type.String({
    default: 'https://mainnet.base.org',
    description: 'JSON-RPC endpoint of the chain holding agent wallets (balances, smart-wallet signatures)',
  }),
  UNDERGROUND_CHAIN_ID: Type.Integer({
    minimum: 1,
    default: 8453,
    description: 'chain id of UNDERGROUND_RPC_URL; also the EIP-712 domain chain id of bus messages',
  }),
  USDC_CONTRACT_ADDRESS: Type.String({
    pattern: '^0x[0-9a-fA-F]{40}$',
    default: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    description: 'the USDC (6 decimals) ERC-20 contract on that chain',
  }),
  RPC_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000, description: 'timeout of each chain RPC call' }),
  WALLET_CACHE_MS: Type.Integer({
    minimum: 0,
    maximum: 300_000,
    default: 15_000,
    description:
      "how long a wallet's balances and transfers read from the chain are served again before the chain is asked anew",
  }),
  WALLET_TRANSFER_LOOKBACK_BLOCKS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description: 'how many blocks back GET /api/wallet looks for USDC transfers (RPC nodes bound a log query)',
  }),
  WALLET_NATIVE_SYMBOL: Type.String({
    minLength: 1,
    maxLength: 12,
    default: 'ETH',
    description: "the symbol of the chain's native coin in wallet answers",
  }),
  BUS_MAX_AGE_SECONDS: Type.Integer({
    minimum: 1,
    default: 300,
    description: 'bus messages whose signed timestamp is further than this from now are refused',
  }),
  NEGOTIATION_SERVICE_URL: Type.Optional(
    Type.String({
      description: 'endpoint BOOKING_* bus messages are POSTed to before delivery; unset: those actions answer 503',
    }),
  ),
  AMPLIFICATION_SERVICE_URL: Type.Optional(
    Type.String({
      description: 'endpoint AMPLIFY_* bus messages are POSTed to before delivery; unset: those actions answer 503',
    }),
  ),
  BUS_ROUTING_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10000,
    description: 'timeout of calls to the negotiation and amplification services',
  }),
  BUS_DAILY_MESSAGE_LIMITS: Type.String({
    default: 'solo:100,collective:500,label:2000,network:10000',
    pattern: '^[a-z_]{1,32}:[0-9]{1,9}(,[a-z_]{1,32}:[0-9]{1,9})*$',
    description:
      'agent-to-agent bus messages a user may send per UTC day, by plan (plan:limit,...); free and unknown plans get the solo limit',
  }),
  BUS_DELIVERY_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10000,
    description: 'timeout of each delivery to an agent webhook',
  }),
  BUS_DELIVERY_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 4,
    description: 'bus deliveries each bridge worker process makes at once',
  }),
  BUS_DELIVERY_ALLOWED_ADDRESSES: Type.String({
    default: '',
    description:
      'comma-separated IPs or CIDRs that agent webhooks may reach although private/loopback (development only)',
  }),
  LIVESTREAM_WEBHOOK_SECRET: Type.Optional(
    Secret({ description: 'HMAC-SHA256 key of live-stream provider webhooks; unset: the receiver answers 503' }),
  ),
  HOSTING_STATUS_WEBHOOK_SECRET: Type.Optional(
    Secret({ description: 'HMAC-SHA256 key of hosting-platform status webhooks; unset: the receiver answers 503' }),
  ),
  WEBHOOK_TOLERANCE_SECONDS: Type.Integer({
    minimum: 1,
    default: 300,
    description: 'signed webhook timestamps older or newer than this are refused',
  }),
};

export function loadBridgeConfig(env?: Record<string, string | undefined>) {
  return loadConfig(bridgeSettings, env ? { env, files: false } : {});
}

export type BridgeConfig = ReturnType<typeof loadBridgeConfig>;
