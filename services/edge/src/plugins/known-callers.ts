import { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FreshCache, listenForNotices, type NoticeListener } from '@agentyard/db';
import type { Log } from '@agentyard/http';
import { identityChangesChannel } from '@agentyard/identity';
import { metrics } from '@agentyard/observability';
import { redisConnection } from '@agentyard/queue';
import type { Redis } from 'ioredis';

/** The channel the database's triggers notify with `token:<hash>` (a session or API key changed or went) or `user:<id>` (an address or its verification changed). */
export const IDENTITY_NOTICE_CHANNEL = 'agentyard_identity';
const MAX_ENTRIES = 50_000;

/** What a session token or `sk_` key resolved to in the database. */
export interface KnownCaller {
  sessionId: string | null;
  /** The `sk_` key's own id (a session: null). */
  keyId: string | null;
  userId: string;
  email: string;
  emailVerified: boolean;
  /** When a session expires (epoch ms); keys do not. */
  expiresAt: number;
}

let instances = 0;

/**
 * The callers the edge resolved, by the hash of their token, answered from memory only while it
 * hears of every change to them, from the database whenever it does not (FreshCache). Two feeds:
 * the database's notices (triggers on sessions, API keys and users: no path that changes them can
 * fail to tell) and the Redis channel on which the auth service announces a revocation before it
 * answers the request that made it (announceUserChanged), which therefore reaches this process
 * before the caller's next request can. While either feed is down nothing is answered from memory.
 * A request lets the messages already received be applied (one turn of the event loop) before it
 * is answered from memory.
 */
export class KnownCallers {
  private readonly callers = new FreshCache<KnownCaller>(MAX_ENTRIES);
  private readonly notices: NoticeListener;
  private readonly announcements: Redis;
  private announcementsLive = false;
  /** Whether the last change of the feeds left callers answered from memory. */
  private wasCached = false;
  private closing = false;
  private readonly log: Pick<Log, 'info' | 'warn'>;
  /** Names the notice connection in pg_stat_activity and the announcements' in Redis's CLIENT LIST (tests end them there). */
  readonly applicationName = `edge-identity-${process.pid}-${++instances}`;
  /** `notice` (payload) once applied, `listening`, `lost`: tests await these instead of sleeping. */
  readonly events = new EventEmitter();

  constructor(options: {
    databaseUrl: string;
    redisUrl: string;
    queuePrefix: string;
    log: Pick<Log, 'info' | 'warn'>;
  }) {
    this.log = options.log;
    this.notices = listenForNotices(
      options.databaseUrl,
      IDENTITY_NOTICE_CHANNEL,
      {
        notice: (payload) => this.forget(payload),
        listening: () => this.feedsChanged(),
        lost: (error) => this.feedsChanged(error),
      },
      { applicationName: this.applicationName },
    );
    const channel = identityChangesChannel(options.queuePrefix);
    // Subscribed anew on each connection, so that the feed counts as live only once Redis confirmed it.
    this.announcements = redisConnection(
      options.redisUrl,
      { autoResubscribe: false, maxRetriesPerRequest: null, connectionName: this.applicationName },
      { purpose: 'identity announcements', log: options.log, level: 'warn' },
    );
    this.announcements.on('message', (from: string, payload: string) => {
      if (from === channel) this.forget(payload);
    });
    this.announcements.on('ready', () => {
      this.announcements.subscribe(channel).then(
        () => {
          this.announcementsLive = true;
          this.feedsChanged();
        },
        (error: Error) => {
          options.log.warn(
            { err: { message: error.message } },
            'identity announcements: subscription refused, reconnecting',
          );
          this.announcements.disconnect(true);
        },
      );
    });
    this.announcements.on('close', () => {
      if (!this.announcementsLive) return;
      this.announcementsLive = false;
      this.feedsChanged(new Error('Redis connection closed'));
    });
  }

  /** Whether callers may be answered from memory (both feeds are live). */
  get cached(): boolean {
    return this.notices.listening && this.announcementsLive;
  }

  /** The caller holding the token of this hash (`kind` names the lookup), unknown or expired: undefined. */
  async resolve(
    tokenHash: string,
    kind: 'session' | 'user-key',
    lookUp: () => Promise<KnownCaller | undefined>,
  ): Promise<KnownCaller | undefined> {
    if (this.cached) await nextTurn();
    const caller = await this.callers.get(tokenHash, () => {
      metrics.edgeIdentityLookups().inc({ kind });
      return lookUp();
    });
    return caller && caller.expiresAt > Date.now() ? caller : undefined;
  }

  private feedsChanged(error?: Error): void {
    const cached = this.cached;
    if (cached === this.wasCached) return;
    this.wasCached = cached;
    if (cached) {
      this.callers.resume();
      this.log.info(
        { channel: IDENTITY_NOTICE_CHANNEL },
        'callers answered from memory (identity notices and announcements received)',
      );
      this.events.emit('listening');
    } else {
      this.callers.suspend();
      if (!this.closing)
        this.log.warn(
          { reason: error?.message },
          'identity notices or announcements lost: every caller is looked up in the database until they are back',
        );
      this.events.emit('lost');
    }
  }

  private forget(payload: string): void {
    const separator = payload.indexOf(':');
    const kind = payload.slice(0, separator);
    const id = payload.slice(separator + 1);
    if (kind === 'token') this.callers.delete(id);
    else if (kind === 'user') this.callers.deleteWhere((caller) => caller.userId === id);
    else this.callers.clear();
    this.events.emit('notice', payload);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.announcements.disconnect();
    await this.notices.close();
  }
}
