import { EventEmitter } from 'node:events';
import { hashToken } from '@agentyard/crypto';
import { currentPlan, FreshCache, listenForNotices, type NoticeListener, type Plan } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { agentByAiKeyHash, type AgentCaller } from './agent-keys.ts';
import { subscriptionById, type SubscriptionRow } from './subscriptions.ts';
import { sealedProviderKeys } from './provider-keys.ts';
import { minuteLimitsOfKey } from './user-keys.ts';
import type { MinuteLimits } from '../limits/minute-limits.ts';
import type { Log } from '@agentyard/http';

/** The channel the database's triggers notify with `<table>:<id>` when a row the lookups read changes. */
export const CACHE_NOTICE_CHANNEL = 'agentyard_cache';
const MAX_ENTRIES = 10_000;
/** How long a key found in no agent is answered as unknown without asking the database (random keys cost one lookup each otherwise). */
const UNKNOWN_KEY_TTL_MS = 10_000;

/** A hosted agent, whether its owner is an admin (ADMIN_EMAILS), and the owner's plan now. */
export interface HostedAgentCaller {
  agent: AgentCaller;
  admin: boolean;
  plan: Plan | null;
}

/**
 * What the chat path reads about its caller on every call (the subscription named by a backend
 * caller; a hosted agent by its AI key, with its owner's subscription), answered from memory while
 * the database's change notices are being received, and from the database whenever they are not.
 * A cancelled subscription, a revoked agent key or a changed plan therefore counts on the next call.
 */
export class CallerLookups {
  private readonly system: SystemDb;
  private readonly activeStatuses: readonly string[];
  private readonly subscriptions = new FreshCache<SubscriptionRow>(MAX_ENTRIES);
  private readonly agents = new FreshCache<HostedAgentCaller>(MAX_ENTRIES, { missTtlMs: UNKNOWN_KEY_TTL_MS });
  /** A user calling with their own API key: their plan now, by `<user id>:<admin>`. */
  private readonly users = new FreshCache<{ plan: Plan | null }>(MAX_ENTRIES);
  /** A user's own provider keys (BYOK), sealed, by user id. */
  private readonly ownKeys = new FreshCache<Map<string, string>>(MAX_ENTRIES);
  /** A user API key's own per-minute limits, by key id (the edge signs which key called). */
  private readonly keyLimits = new FreshCache<{ limits: MinuteLimits | null }>(MAX_ENTRIES);
  private readonly listener: NoticeListener;
  /** `notice` (payload) once applied, `listening`, `lost`: tests await these instead of sleeping. */
  readonly events = new EventEmitter();

  private readonly isAdmin: (owner: { email: string; emailVerified: boolean }) => boolean;

  constructor(
    system: SystemDb,
    listenUrl: string,
    activeStatuses: readonly string[],
    isAdmin: (owner: { email: string; emailVerified: boolean }) => boolean,
    log: Pick<Log, 'info' | 'warn'>,
  ) {
    this.system = system;
    this.activeStatuses = activeStatuses;
    this.isAdmin = isAdmin;
    this.listener = listenForNotices(
      listenUrl,
      CACHE_NOTICE_CHANNEL,
      {
        notice: (payload) => this.invalidate(payload),
        listening: () => {
          this.subscriptions.resume();
          this.agents.resume();
          this.users.resume();
          this.ownKeys.resume();
          this.keyLimits.resume();
          log.info({ channel: CACHE_NOTICE_CHANNEL }, 'caller lookups cached (change notices received)');
          this.events.emit('listening');
        },
        lost: (error) => {
          this.subscriptions.suspend();
          this.agents.suspend();
          this.users.suspend();
          this.ownKeys.suspend();
          this.keyLimits.suspend();
          log.warn(
            { channel: CACHE_NOTICE_CHANNEL, reason: error?.message },
            'change notices lost: caller lookups go to the database until they are back',
          );
          this.events.emit('lost');
        },
      },
      { applicationName: `ai-cache-notices-${process.pid}` },
    );
  }

  /** Whether lookups may be answered from memory (the change notices are being received). */
  get cached(): boolean {
    return this.listener.listening;
  }

  /** The subscription when its status counts as active. */
  async activeSubscription(id: string): Promise<SubscriptionRow | undefined> {
    const row = await this.subscriptions.get(id, () => subscriptionById(this.system, id));
    return row && this.activeStatuses.includes(row.status) ? row : undefined;
  }

  /** The hosted agent holding this AI key, with its owner's plan now (currentPlan). */
  agentByAiKey(key: string): Promise<HostedAgentCaller | undefined> {
    const keyHash = hashToken(key);
    return this.agents.get(keyHash, async () => {
      const agent = await agentByAiKeyHash(this.system, keyHash);
      if (!agent) return undefined;
      const admin = this.isAdmin(agent);
      return {
        agent,
        admin,
        plan: await currentPlan(this.system, agent.userId, { admin, activeStatuses: this.activeStatuses }),
      };
    });
  }

  /** The plan now (currentPlan) of a user calling with their own API key; `admin` as the edge found them. */
  async userPlan(userId: string, admin: boolean): Promise<Plan | null> {
    const found = await this.users.get(`${userId}:${admin}`, async () => ({
      plan: await currentPlan(this.system, userId, { admin, activeStatuses: this.activeStatuses }),
    }));
    return found?.plan ?? null;
  }

  /** The user's own key for a provider, sealed (undefined: none, the platform's key serves). */
  async sealedProviderKey(userId: string, provider: string): Promise<string | undefined> {
    const keys = await this.ownKeys.get(userId, () => sealedProviderKeys(this.system, userId));
    return keys?.get(provider);
  }

  /** The per-minute limits its owner set on a user API key (null: none). */
  async keyMinuteLimits(keyId: string): Promise<MinuteLimits | null> {
    const found = await this.keyLimits.get(keyId, async () => ({
      limits: await minuteLimitsOfKey(this.system, keyId),
    }));
    return found?.limits ?? null;
  }

  /** A change this process made itself (a webhook it applied) counts at once, before its notice arrives. */
  subscriptionChanged(id: string): void {
    this.invalidate(`subscriptions:${id}`);
  }

  private invalidate(payload: string): void {
    const [table, id] = payload.split(':', 2);
    if (table === 'subscriptions') {
      this.subscriptions.delete(id ?? '');
      this.agents.clear(); // any owner's answer may have changed; subscription changes are rare
      this.users.clear();
    } else if (table === 'agents') {
      this.agents.deleteWhere((entry) => entry.agent.agentId === id);
    } else if (table === 'provider_keys') {
      this.ownKeys.delete(id ?? '');
    } else if (table === 'api_keys') {
      this.keyLimits.delete(id ?? '');
    } else if (table === 'users') {
      this.agents.deleteWhere((entry) => entry.agent.userId === id);
      this.users.clear();
    } else {
      this.subscriptions.clear();
      this.agents.clear();
      this.users.clear();
      this.ownKeys.clear();
      this.keyLimits.clear();
    }
    this.events.emit('notice', payload);
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
