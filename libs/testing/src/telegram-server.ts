import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking the Telegram Bot API wire (https://core.telegram.org/bots/api) as
 * OpenClaw's Telegram channel (grammY) calls it, reached through `channels.telegram.apiRoot`:
 * `POST /bot<token>/<method>` with a JSON (or form) body, answered `{ok: true, result}` or
 * `{ok: false, error_code, description}`. One bot (its token), `getUpdates` long polling over
 * updates a test pushes as a Telegram user would send them, and every outgoing call recorded.
 */

export interface BotApiCall {
  method: string;
  /** The token in the path (the bot's, or whatever a caller sent). */
  token: string;
  params: Record<string, unknown>;
  at: number;
}

export interface TelegramUser {
  id: number;
  first_name: string;
  username?: string;
}

export interface TelegramServer {
  /** The Bot API root (no `/bot<token>`): OpenClaw's `channels.telegram.apiRoot`. */
  url: string;
  /** The bot's token (`<bot id>:<secret>`, the shape BotFather gives). */
  token: string;
  bot: { id: number; username: string };
  /** Every call with a path this server understood, in order. */
  calls: BotApiCall[];
  /** A private message from `from` to the bot, delivered to the next (or the waiting) getUpdates. Returns its update_id. */
  sendPrivateMessage(from: TelegramUser, text: string): number;
  /** The first call matching `predicate`, already made or the next one (rejects after `timeoutMs`). */
  waitForCall(predicate: (call: BotApiCall) => boolean, timeoutMs: number): Promise<BotApiCall>;
  /** getUpdates requests being held open now (long polls waiting for an update). */
  pendingPolls(): number;
  /** Resolves once no getUpdates is held open (the poller went away), or rejects after `timeoutMs`. */
  pollsClosed(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

type Answer = { ok: true; result: unknown } | { ok: false; error_code: number; description: string };

const now = () => Math.floor(Date.now() / 1000);

async function bodyOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  const type = request.headers['content-type'] ?? '';
  if (type.includes('application/json')) return JSON.parse(text) as Record<string, unknown>;
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  return { raw: text };
}

/** Starts the server on `host` (an address the agent containers reach: the host's own under `npm test`). */
export async function startTelegramServer(
  options: { host?: string; botId?: number; username?: string } = {},
): Promise<TelegramServer> {
  const botId = options.botId ?? 7_000_000_000 + Math.floor(Math.random() * 1_000_000);
  const secret = `AA${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')}`;
  const token = `${botId}:${secret}`;
  const bot = { id: botId, username: options.username ?? 'agentyard_test_bot' };
  const calls: BotApiCall[] = [];
  const callWaiters: { predicate: (call: BotApiCall) => boolean; resolve: (call: BotApiCall) => void }[] = [];
  const updates: { update_id: number; message: Record<string, unknown> }[] = [];
  let nextUpdateId = 100_000;
  let nextMessageId = 1;
  /** getUpdates held open: each is answered when an update arrives or its timeout passes. */
  const polls = new Set<{ offset: number; answer: () => void }>();
  const closedWaiters: (() => void)[] = [];
  const sockets = new Set<import('node:net').Socket>();

  const record = (call: BotApiCall) => {
    calls.push(call);
    for (const waiter of [...callWaiters]) {
      if (waiter.predicate(call)) {
        callWaiters.splice(callWaiters.indexOf(waiter), 1);
        waiter.resolve(call);
      }
    }
  };
  const pending = (offset: number) => updates.filter((u) => u.update_id >= offset);
  const pollGone = () => {
    if (polls.size === 0) for (const resolve of closedWaiters.splice(0)) resolve();
  };
  const botUser = { id: botId, is_bot: true, first_name: 'Agentyard test bot', username: bot.username };
  const sentMessage = (params: Record<string, unknown>) => ({
    message_id: nextMessageId++,
    date: now(),
    chat: { id: Number(params.chat_id), type: 'private' },
    from: botUser,
    text: String(params.text ?? ''),
  });

  /** Each method the channel calls, answered as the Bot API answers it. */
  const methods: Record<string, (params: Record<string, unknown>) => unknown> = {
    getMe: () => ({
      ...botUser,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
    }),
    deleteWebhook: () => true,
    setWebhook: () => true,
    getWebhookInfo: () => ({ url: '', has_custom_certificate: false, pending_update_count: updates.length }),
    setMyCommands: () => true,
    deleteMyCommands: () => true,
    getMyCommands: () => [],
    setMyDescription: () => true,
    setMyShortDescription: () => true,
    setChatMenuButton: () => true,
    sendChatAction: () => true,
    setMessageReaction: () => true,
    sendMessage: sentMessage,
    editMessageText: (params) => ({ ...sentMessage(params), message_id: Number(params.message_id), edit_date: now() }),
    deleteMessage: () => true,
    getChat: (params) => ({ id: Number(params.chat_id), type: 'private' }),
    answerCallbackQuery: () => true,
  };

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const reply = (status: number, answer: Answer) => {
      if (response.writableEnded || response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    };
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(request.url ?? '/', 'http://x').pathname);
    if (!match) return reply(404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, pathToken, method] = match as unknown as [string, string, string];
    let params: Record<string, unknown>;
    try {
      params = {
        ...Object.fromEntries(new URL(request.url ?? '/', 'http://x').searchParams),
        ...(await bodyOf(request)),
      };
    } catch {
      return reply(400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
    }
    record({ method, token: pathToken, params, at: Date.now() });
    if (pathToken !== token) return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    if (method === 'getUpdates') {
      const offset = params.offset === undefined ? 0 : Number(params.offset);
      // Confirming updates below the offset, as Telegram does.
      updates.splice(0, updates.length, ...pending(offset));
      const ready = pending(offset);
      const waitSeconds = Math.min(Number(params.timeout ?? 0), 50);
      if (ready.length > 0 || waitSeconds <= 0) return reply(200, { ok: true, result: ready });
      const poll = {
        offset,
        answer: () => {
          polls.delete(poll);
          clearTimeout(timer);
          reply(200, { ok: true, result: pending(offset) });
          pollGone();
        },
      };
      const timer = setTimeout(poll.answer, waitSeconds * 1000);
      polls.add(poll);
      // The poller went away (its gateway stopped): the poll is no longer held.
      response.on('close', () => {
        if (!polls.has(poll)) return;
        polls.delete(poll);
        clearTimeout(timer);
        pollGone();
      });
      return;
    }
    const handler = methods[method];
    if (!handler) return reply(404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    return reply(200, { ok: true, result: handler(params) });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}`,
    token,
    bot,
    calls,
    sendPrivateMessage(from, text) {
      const update_id = nextUpdateId++;
      updates.push({
        update_id,
        message: {
          message_id: nextMessageId++,
          date: now(),
          chat: {
            id: from.id,
            type: 'private',
            first_name: from.first_name,
            ...(from.username ? { username: from.username } : {}),
          },
          from: { ...from, is_bot: false, language_code: 'en' },
          text,
        },
      });
      for (const poll of [...polls]) if (pending(poll.offset).length > 0) poll.answer();
      return update_id;
    },
    waitForCall(predicate, timeoutMs) {
      const made = calls.find(predicate);
      if (made) return Promise.resolve(made);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (call: BotApiCall) => {
            clearTimeout(timer);
            resolve(call);
          },
        };
        const timer = setTimeout(() => {
          callWaiters.splice(callWaiters.indexOf(waiter), 1);
          reject(
            new Error(
              `no matching Bot API call within ${timeoutMs} ms (calls so far: ${calls.map((c) => c.method).join(', ') || 'none'})`,
            ),
          );
        }, timeoutMs);
        callWaiters.push(waiter);
      });
    },
    pendingPolls: () => polls.size,
    pollsClosed(timeoutMs) {
      if (polls.size === 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`a getUpdates was still held open after ${timeoutMs} ms`)),
          timeoutMs,
        );
        closedWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async close() {
      for (const poll of [...polls]) poll.answer();
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
