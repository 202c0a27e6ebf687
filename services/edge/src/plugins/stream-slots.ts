import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashToken } from '@agentyard/crypto';
import type { Identity } from '@agentyard/identity';
import { EdgeErrors } from '../errors.ts';

/**
 * The long-lived answers (event streams, streamed chat, WebSockets) an edge process holds open: at
 * most `perHolder` for one caller and `total` for all of them, so no caller can hold every
 * connection and nothing the edge holds grows without bound. Counted in this process's memory:
 * a slot is taken before the answer is relayed and given back when its connection closes
 * (`given` is emitted then: tests await it).
 */
export class StreamSlots extends EventEmitter<{ given: [holder: string] }> {
  readonly #perHolder: number;
  readonly #total: number;
  readonly #held = new Map<string, number>();
  #open = 0;

  constructor(perHolder: number, total: number) {
    super();
    this.#perHolder = perHolder;
    this.#total = total;
  }

  /** Open long-lived answers, all callers together. */
  get open(): number {
    return this.#open;
  }

  /** Takes a slot for `holder` (429 `{error, code, limit}` when none is left); the answer gives it back once. */
  take(holder: string): () => void {
    const held = this.#held.get(holder) ?? 0;
    if (held >= this.#perHolder) throw EdgeErrors.tooManyStreams(this.#perHolder);
    if (this.#open >= this.#total) throw EdgeErrors.streamsFull(this.#total);
    this.#held.set(holder, held + 1);
    this.#open++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#open--;
      const left = (this.#held.get(holder) ?? 1) - 1;
      if (left > 0) this.#held.set(holder, left);
      else this.#held.delete(holder);
      this.emit('given', holder);
    };
  }

  /**
   * Holds a slot for the request's caller while its answer is open: until the response closes, or
   * for a WebSocket upgrade until its socket does (the socket is the conversation).
   */
  hold(request: FastifyRequest, reply: FastifyReply, identity: Identity, upgrade: boolean): void {
    const give = this.take(holderOf(request, identity));
    const closes = upgrade ? request.raw.socket : reply.raw;
    if (upgrade ? request.raw.socket.destroyed : reply.raw.closed) give();
    else closes.once('close', give);
  }
}

/** Whose slots a request takes: its user, else the agent whose bearer key it carries (hashed), else its address. */
function holderOf(request: FastifyRequest, identity: Identity): string {
  if (identity.userId) return `user:${identity.userId}`;
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return `key:${hashToken(authorization.slice('Bearer '.length).trim())}`;
  return `ip:${request.ip}`;
}
