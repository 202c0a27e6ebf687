import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter, once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { systemDb } from '@agentyard/testing';

interface Message {
  role: 'user' | 'assistant';
  content: { type: 'text'; text: string }[];
  timestamp: number;
  stopReason?: string;
  errorMessage?: string;
}

/**
 * A real HTTP server standing in for an OpenClaw gateway and its model calls: `POST /hooks/agent`
 * (hooks token) starts a turn in the requested session, stored as the gateway stores it
 * (`agent:main:<key>`), `POST /hooks/wake` records heartbeats; `POST /tools/invoke` (gateway token) answers `sessions_list` and
 * `sessions_history` as the gateway's tools do. `answer()` ends a turn as the agent would, first
 * writing the turn's model call as the AI gateway writes usage rows; `fail()` ends it with an error.
 */
export async function startGatewayStandIn(tokens: { hooks: string; gateway: string }) {
  const sessions = new Map<string, Message[]>();
  const events = new EventEmitter();
  const hookCalls: { sessionKey: string; message: string }[] = [];
  const wakes: string[] = [];
  /** Sessions of other kinds (web chat, channels, main) with when they were last active. */
  const activity = new Map<string, number>();
  /** Statuses the next tool calls answer with instead of their result, in order. */
  const toolFailures: number[] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text || '{}') as Record<string, unknown>;
    const reply = (status: number, payload: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (req.url === '/hooks/agent') {
      if (req.headers.authorization !== `Bearer ${tokens.hooks}`) return reply(401, { ok: false });
      const key = `agent:main:${String(body.sessionKey)}`;
      const messages = sessions.get(key) ?? [];
      messages.push({ role: 'user', content: [{ type: 'text', text: String(body.message) }], timestamp: Date.now() });
      sessions.set(key, messages);
      hookCalls.push({ sessionKey: String(body.sessionKey), message: String(body.message) });
      reply(200, { ok: true, runId: randomUUID() });
      events.emit('turn', String(body.sessionKey));
      return;
    }
    if (req.url === '/hooks/wake') {
      if (req.headers.authorization !== `Bearer ${tokens.hooks}`) return reply(401, { ok: false });
      wakes.push(String(body.text));
      return reply(200, { ok: true });
    }
    if (req.url === '/tools/invoke') {
      if (req.headers.authorization !== `Bearer ${tokens.gateway}`)
        return reply(401, { ok: false, error: 'Unauthorized' });
      const args = (body.args ?? {}) as Record<string, unknown>;
      const failure = toolFailures.shift();
      if (failure) {
        reply(failure, { ok: false, error: { type: 'tool_error', message: 'tool execution failed' } });
        if (!toolFailures.length) events.emit('tools-failed');
        return;
      }
      if (body.tool === 'sessions_list') {
        const listed = [...sessions.keys()].map((key) => ({
          key,
          kind: 'hook',
          updatedAt: sessions.get(key)!.at(-1)?.timestamp ?? Date.now(),
        }));
        return reply(200, {
          ok: true,
          result: {
            details: { sessions: [...listed, ...[...activity].map(([key, updatedAt]) => ({ key, updatedAt }))] },
          },
        });
      }
      if (body.tool === 'sessions_history')
        return reply(200, { ok: true, result: { details: { messages: sessions.get(String(args.sessionKey)) ?? [] } } });
      return reply(404, { ok: false });
    }
    reply(404, { ok: false });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const end = (sessionKey: string, message: Omit<Message, 'role' | 'timestamp'>) => {
    const messages = sessions.get(`agent:main:${sessionKey}`);
    if (!messages) throw new Error(`no turn in ${sessionKey}`);
    messages.push({ role: 'assistant', timestamp: Date.now(), ...message });
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hookCalls,
    wakes,
    /** A session `key` (as the gateway stores it) last active at `at`. */
    session(key: string, at: Date) {
      activity.set(key, at.getTime());
    },
    /** The next tool calls answer these statuses (as the gateway's tools do when they fail or are off); resolves once all were answered. */
    failTools(...statuses: number[]): Promise<void> {
      toolFailures.push(...statuses);
      return once(events, 'tools-failed').then(() => undefined);
    },
    /** Resolves when the next turn starts in `sessionKey`. */
    turn(sessionKey: string): Promise<void> {
      return new Promise((resolve) => {
        const listener = (key: string) => {
          if (key !== sessionKey) return;
          events.off('turn', listener);
          resolve();
        };
        events.on('turn', listener);
      });
    },
    /** The agent answers `text`, after one model call of `tokens` costing `costUsd` through the AI gateway. */
    async answer(
      sessionKey: string,
      agent: { userId: string; agentId: string },
      text: string,
      usage = { tokens: 120, costUsd: '0.00125' },
    ) {
      const at = new Date();
      await systemDb()
        .insertInto('usage_events')
        .values({
          id: randomUUID(),
          user_id: agent.userId,
          user_ref: agent.userId,
          agent_id: agent.agentId,
          model: 'openai/gpt-4o-mini',
          provider: 'openai',
          input_tokens: usage.tokens - 20,
          output_tokens: 20,
          total_tokens: usage.tokens,
          cost_usd: usage.costUsd,
          turn_count: 1,
          occurred_at: at,
          day: at.toISOString().slice(0, 10),
        })
        .execute();
      end(sessionKey, { content: [{ type: 'text', text }], stopReason: 'stop' });
    },
    fail(sessionKey: string, errorMessage: string) {
      end(sessionKey, { content: [], stopReason: 'error', errorMessage });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
