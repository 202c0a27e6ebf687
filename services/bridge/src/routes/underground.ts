import { fastifyRoute, NEXT_CURSOR_HEADER, undergroundRoutes } from '@agentyard/proto-schemas';
import { withUser, type UserTx } from '@agentyard/db';
import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import type { FastifyRequest } from 'fastify';
import type { Address, PublicClient } from 'viem';
import { BridgeErrors } from '../errors.ts';
import { usdcBalance } from '../domain/chain.ts';
import { createEvent, listEvents } from '../domain/events.ts';
import { createSplit } from '../domain/splits.ts';
import { checksumAddress, createWallet, requireOwnWallet } from '../domain/wallets.ts';
import { registerBusEndpoint } from '../domain/bus-endpoints.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface UndergroundOptions {
  keyring: Keyring;
  chain: PublicClient;
  usdc: Address;
}

/**
 * The backend caller's user context (`x-user-id`, `x-user-email`, carried by the edge); body
 * fields never stand in for it. Work runs as that user, so row-level security scopes every row.
 */
function asContextUser<T>(
  app: ServiceApp,
  request: FastifyRequest,
  work: (trx: UserTx, userId: string) => Promise<T>,
): Promise<T> {
  const { userId, email } = request.identity;
  if (!userId || !email || !UUID.test(userId)) throw BridgeErrors.userContextRequired();
  return withUser(app.db, userId, (trx) => work(trx, userId));
}

export default async function undergroundRoutesPlugin(app: ServiceApp, { keyring, chain, usdc }: UndergroundOptions) {
  app.route({
    ...fastifyRoute(undergroundRoutes.createWallet),
    handler: async (request, reply) => {
      const wallet = await asContextUser(app, request, (trx, userId) =>
        createWallet(trx, keyring, userId, request.body.agentId),
      );
      return reply.code(201).send(wallet);
    },
  });

  app.route({
    ...fastifyRoute(undergroundRoutes.walletBalance),
    handler: async (request) => {
      const address = checksumAddress(request.params.address);
      await asContextUser(app, request, (trx) => requireOwnWallet(trx, address));
      return { address, balance_usdc: await usdcBalance(chain, usdc, address) };
    },
  });

  app.route({
    ...fastifyRoute(undergroundRoutes.listEvents),
    handler: async (request, reply) => {
      const { limit = 50, cursor } = request.query;
      const { events, nextCursor } = await asContextUser(app, request, (trx) => listEvents(trx, { limit, cursor }));
      // The interface's body is the bare array: the next page's cursor travels in a header.
      if (nextCursor) reply.header(NEXT_CURSOR_HEADER, nextCursor);
      return events;
    },
  });

  app.route({
    ...fastifyRoute(undergroundRoutes.createEvent),
    handler: async (request, reply) => {
      const event = await asContextUser(app, request, (trx, userId) => createEvent(trx, userId, request.body));
      return reply.code(201).send(event);
    },
  });

  app.route({
    ...fastifyRoute(undergroundRoutes.createSplit),
    handler: async (request) => asContextUser(app, request, (trx, userId) => createSplit(trx, userId, request.body)),
  });

  app.route({
    ...fastifyRoute(undergroundRoutes.registerBusEndpoint),
    handler: async (request) =>
      asContextUser(app, request, (trx, userId) =>
        registerBusEndpoint(trx, userId, request.params.agentId, request.body),
      ),
  });
}
