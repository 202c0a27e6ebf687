import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable } from './common.ts';
import { CREDIT_PURCHASE_USD, SeeOther } from './billing.ts';
import { route } from './route.ts';
import { EvmAddress } from './underground.ts';

/** The signed-in user's wallet (issue 32): balances and transfers read from the chain, buying credits, and what is not offered. */

export const WalletOverviewQuery = Type.Object(
  {
    address: Type.Optional({
      ...EvmAddress,
      description: 'any address (default: the wallet linked by wallet sign-in)',
    }),
  },
  { additionalProperties: false },
);
export const WalletTransfersQuery = Type.Object(
  {
    address: Type.Optional({ ...EvmAddress, description: 'any address (default: the linked wallet)' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

/** A USDC transfer into or out of the wallet (an ERC-20 Transfer event). */
export const WalletTransfer = Type.Object({
  hash: Type.String(),
  blockNumber: Type.Integer(),
  from: Type.String(),
  to: Type.String(),
  direction: Type.Union([Type.Literal('in'), Type.Literal('out')]),
  token: Type.Literal('USDC'),
  amount: Type.String({ description: 'decimal USDC' }),
});
export const WalletBalances = Type.Object({
  native: Type.Object({
    symbol: Type.String(),
    balance: Type.String({ description: 'decimal, 18 decimals' }),
    wei: Type.String(),
  }),
  usdc: Type.Object({
    contract: Type.String(),
    balance: Type.String({ description: 'decimal, 6 decimals' }),
    units: Type.String(),
  }),
});
export const WalletOverview = Type.Object({
  address: Type.String(),
  chainId: Type.Integer(),
  ...WalletBalances.properties,
  transfers: Type.Array(WalletTransfer),
  /** The newest block the balances were read at. */
  blockNumber: Type.Integer(),
  fetchedAt: IsoDate,
});
export const LinkedWalletAddress = Type.Object({ address: Nullable(Type.String()), linkedAt: Nullable(IsoDate) });
export const WalletTransfers = Type.Object({
  address: Type.String(),
  chainId: Type.Integer(),
  transfers: Type.Array(WalletTransfer),
  fetchedAt: IsoDate,
});
export const WalletTopUpQuery = Type.Object(
  { amount: Type.Number({ ...CREDIT_PURCHASE_USD, description: 'USD of credits to buy, at most two decimals' }) },
  { additionalProperties: false },
);

/** Wallet features that would need a custodian or a payment network we do not run: 501 `NOT_SUPPORTED`, the reason in docs/wallet.md. */
const notSupported = (url: string, summary: string) =>
  route({
    method: 'POST',
    url,
    service: 'bridge',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-wallet',
    summary: `${summary}: not offered, 501 NOT_SUPPORTED (docs/wallet.md says why)`,
    schema: { response: { ...Errors, 501: ErrorBody } },
  });

export const walletRoutes = {
  wallet: route({
    method: 'GET',
    url: '/api/wallet',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-wallet',
    summary:
      'The linked wallet (or `address`): native and USDC balances and recent USDC transfers, read from the chain (cached briefly); 404 when no wallet is linked',
    schema: { querystring: WalletOverviewQuery, response: { 200: WalletOverview, ...Errors } },
  }),
  address: route({
    method: 'GET',
    url: '/api/wallet/address',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-wallet',
    summary: 'The wallet linked by wallet sign-in (null when none)',
    schema: { response: { 200: LinkedWalletAddress, ...Errors } },
  }),
  transactions: route({
    method: 'GET',
    url: '/api/wallet/transactions',
    service: 'bridge',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-wallet',
    summary: 'Recent USDC transfers of the linked wallet (or `address`), newest first',
    schema: { querystring: WalletTransfersQuery, response: { 200: WalletTransfers, ...Errors } },
  }),
  topUp: route({
    method: 'GET',
    url: '/api/wallet/top-up',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: ['web-wallet', 'web-billing-provider'],
    summary: "Buys `amount` USD of AI credits: 303 to the credits checkout (the billing path's own)",
    schema: { querystring: WalletTopUpQuery, response: { 303: SeeOther, ...Errors } },
  }),
  createWallet: notSupported('/api/wallet/create', 'A custodial wallet whose key the platform would hold'),
  paymentSession: notSupported('/api/wallet/payment-sessions', 'A payment session'),
  x402: notSupported('/api/wallet/x402', 'An x402 payment proxy'),
};
