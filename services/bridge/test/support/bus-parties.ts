// The parties of a bus conversation in tests: agents of real user rows, their bus endpoints, and a
// local HTTP server standing in for recipient agents' webhooks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { identityHeaders, systemDb } from '@agentyard/testing';
import type { SignedBusFields } from '../../src/domain/bus-signatures.ts';

export type User = { id: string; email: string };

export const asUser = (u: User) =>
  identityHeaders({ surface: 'backend', auth: 'service', userId: u.id, email: u.email });

export async function agentOf(userId: string): Promise<string> {
  const row = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'a',
      model: 'm',
      tools_profile: 'messaging',
      subdomain: `bus-${crypto.randomUUID().slice(0, 8)}`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Registers the wallet that signs for `agentId` and its webhook, as the agent's owner; fails the test otherwise. */
export async function registerOnBus(
  t: Test,
  app: ServiceApp,
  owner: User,
  agentId: string,
  walletAddress: string,
  webhookUrl: string,
): Promise<void> {
  const res = await app.inject({
    method: 'PUT',
    url: `/api/underground/agents/${agentId}/bus`,
    headers: asUser(owner),
    payload: { walletAddress, webhookUrl },
  });
  if (res.statusCode !== 200) t.fail(`bus registration: ${res.statusCode} ${res.body}`);
}

export function busMessage(
  fromAgentId: string,
  toAgentId: string,
  overrides: Partial<SignedBusFields> = {},
): SignedBusFields {
  return {
    messageId: crypto.randomUUID(),
    action: 'PING',
    fromAgentId,
    toAgentId,
    payload: { hello: 'world', n: 1 },
    timestamp: Math.floor(Date.now() / 1000),
    ...overrides,
  };
}

/** Bus send needs no key and no user: the edge forwards it as an anonymous backend call. */
export const sendOnBus = (app: ServiceApp, body: object) =>
  app.inject({
    method: 'POST',
    url: '/api/underground/bus/send',
    headers: identityHeaders({ surface: 'backend' }),
    payload: body,
  });

export interface WebhookHit {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A local server for agent webhooks. Every request is recorded; `answer` decides the reply
 * (default 200 `{}`), so a test can make a webhook fail, redirect or succeed.
 */
export async function startWebhookPeer(t: Test) {
  const hits: WebhookHit[] = [];
  let answer = (_hit: WebhookHit, res: ServerResponse) => {
    res.end('{}');
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const hit = { path: req.url ?? '', body: raw ? JSON.parse(raw) : {} };
    hits.push(hit);
    answer(hit, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    hits,
    answerWith(next: typeof answer) {
      answer = next;
    },
  };
}
