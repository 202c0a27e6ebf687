import { listenForNotices, type NoticeListener } from '@agentyard/db';

/** The channel the agents table's trigger notifies on every status change (migration 2026_11_25_0400). */
export const AGENT_STATUS_CHANNEL = 'agent_status';

export interface AgentStatusEvent {
  agentId: string;
  status: string;
  previousStatus: string | null;
  at: string;
  /** A web lifecycle operation that ended (agent-actions.ts), how it went, and why it failed. */
  action?: string;
  outcome?: 'done' | 'failed';
  error?: string;
}

/** A stream's side: each change of its user's agents, and `relisten` when changes may have been lost (the LISTEN connection was down). */
export interface StatusSubscriber {
  change(event: AgentStatusEvent): void;
  relisten(): void;
}
type Log = { warn(obj: object, msg: string): void };

/**
 * Status changes of agents, per owner, for this process's event streams: one LISTEN connection
 * (the database notifies at commit, whoever wrote the change), each notice handed only to the
 * streams of the agent's owner. Opened with the first subscriber.
 */
export function agentStatusEvents(
  databaseUrl: string,
  log: Log,
  { applicationName = 'agent-status-events' }: { applicationName?: string } = {},
) {
  const byUser = new Map<string, Set<StatusSubscriber>>();
  let listener: NoticeListener | null = null;
  let ready: Promise<void> | null = null;
  let listenedBefore = false;

  const deliver = (payload: string) => {
    let notice: { userId?: string } & Partial<AgentStatusEvent>;
    try {
      notice = JSON.parse(payload);
    } catch {
      return;
    }
    const subscribers = notice.userId ? byUser.get(notice.userId) : undefined;
    if (!subscribers) return;
    const event: AgentStatusEvent = {
      agentId: notice.agentId!,
      status: notice.status!,
      previousStatus: notice.previousStatus ?? null,
      at: new Date(notice.at!).toISOString(),
    };
    if (notice.action)
      Object.assign(event, {
        action: notice.action,
        outcome: notice.outcome,
        ...(notice.error ? { error: notice.error } : {}),
      });
    for (const subscriber of subscribers) subscriber.change(event);
  };

  const open = () => {
    ready ??= new Promise<void>((resolve) => {
      listener = listenForNotices(
        databaseUrl,
        AGENT_STATUS_CHANNEL,
        {
          notice: deliver,
          listening: () => {
            // Listening again after a drop: every stream is told, so its client reads the statuses again.
            if (listenedBefore) for (const set of byUser.values()) for (const subscriber of set) subscriber.relisten();
            listenedBefore = true;
            resolve();
          },
          lost: (error) => log.warn({ err: error }, 'agent status notices lost; listening again'),
        },
        { applicationName },
      );
    });
    return ready;
  };

  return {
    /** Hands `subscriber` each status change of `userId`'s agents from now on; resolves once listening. Returns the unsubscribe. */
    async subscribe(userId: string, subscriber: StatusSubscriber): Promise<() => void> {
      const set = byUser.get(userId) ?? new Set();
      set.add(subscriber);
      byUser.set(userId, set);
      await open();
      return () => {
        set.delete(subscriber);
        if (set.size === 0) byUser.delete(userId);
      };
    },
    async close() {
      byUser.clear();
      await (listener as NoticeListener | null)?.close();
      listener = null;
      ready = null;
      listenedBefore = false;
    },
  };
}

export type AgentStatusEvents = ReturnType<typeof agentStatusEvents>;
