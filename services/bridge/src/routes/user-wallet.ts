import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, walletRoutes as spec } from '@agentyard/proto-schemas';
import { getAddress, type Address } from 'viem';
import { BridgeErrors } from '../errors.ts';
import { linkedWallet, readWallet, WalletReadCache, type WalletChain } from '../domain/user-wallet.ts';

export interface UserWalletOptions {
  chain: WalletChain;
  cacheMs: number;
}

/** The signed-in user's wallet, read from the chain; and the wallet features the platform does not offer (501). */
export default async function userWalletRoutes(app: ServiceApp, { chain, cacheMs }: UserWalletOptions) {
  const cache = new WalletReadCache(cacheMs);
  const read = (address: Address) => cache.get(address, () => readWallet(chain, address));
  const linkedOf = (request: FastifyRequest) =>
    request.asUserStatement((trx) => linkedWallet(trx, request.identity.userId as string));
  /** The address asked for, else the linked wallet's (404 when there is none). */
  async function addressOf(request: FastifyRequest, asked: string | undefined): Promise<Address> {
    if (asked) return getAddress(asked.toLowerCase());
    const linked = await linkedOf(request);
    if (!linked) throw BridgeErrors.noLinkedWallet();
    return linked.address as Address;
  }

  app.route({
    ...fastifyRoute(spec.wallet),
    handler: async (request) => {
      const wallet = await read(await addressOf(request, request.query.address));
      return { ...wallet, transfers: wallet.transfers.slice(0, 20) };
    },
  });

  app.route({
    ...fastifyRoute(spec.address),
    handler: async (request) => (await linkedOf(request)) ?? { address: null, linkedAt: null },
  });

  app.route({
    ...fastifyRoute(spec.transactions),
    handler: async (request) => {
      const { limit = 20 } = request.query;
      const wallet = await read(await addressOf(request, request.query.address));
      return {
        address: wallet.address,
        chainId: wallet.chainId,
        transfers: wallet.transfers.slice(0, limit),
        fetchedAt: wallet.fetchedAt,
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.createWallet),
    handler: async () => {
      throw BridgeErrors.notSupported(
        'Custodial wallets are not offered: the platform would hold your private key. Sign in with your own wallet instead',
      );
    },
  });
  app.route({
    ...fastifyRoute(spec.paymentSession),
    handler: async () => {
      throw BridgeErrors.notSupported('Payment sessions are not offered: pay with credits (GET /api/wallet/top-up)');
    },
  });
  app.route({
    ...fastifyRoute(spec.x402),
    handler: async () => {
      throw BridgeErrors.notSupported(
        'x402 payments are not offered: they need a payment facilitator the platform does not run',
      );
    },
  });
}
