import pg from 'pg';

export interface NoticeHandlers {
  /** A notice's payload, in the order PostgreSQL delivered them. */
  notice(payload: string): void;
  /** The channel is listened to (again): notices sent while it was not were lost. */
  listening(): void;
  /** The connection is gone (or stopped answering); `listening` follows once it is back. */
  lost(error?: Error): void;
}

export interface NoticeOptions {
  /** First reconnection delay, doubled up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** How often the connection is checked with a query, and how long that query may take before it counts as dead. */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
  applicationName?: string;
}

export interface NoticeListener {
  /** Whether notices are being received right now. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/**
 * Listens to one PostgreSQL notification channel on a connection of its own, reconnecting with
 * backoff when it drops. A connection that dies silently is found by a periodic query. Callers that
 * keep state derived from notices (caches) must not trust it between `lost` and `listening`.
 */
export function listenForNotices(
  connectionString: string,
  channel: string,
  handlers: NoticeHandlers,
  options: NoticeOptions = {},
): NoticeListener {
  const retryMs = options.retryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 10_000;
  const heartbeatMs = options.heartbeatMs ?? 5000;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 2000;
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let delay = retryMs;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const drop = (current: pg.Client, error?: Error): Promise<void> => {
    if (client !== current) return Promise.resolve();
    client = null;
    clearInterval(heartbeat);
    current.removeAllListeners('notification');
    current.on('error', () => {
      /* already dropped */
    });
    const ended = current.end().catch(() => {});
    if (listening) {
      listening = false;
      handlers.lost(error);
    }
    if (!closed) {
      retry = setTimeout(connect, delay);
      delay = Math.min(delay * 2, maxRetryMs);
    }
    return ended;
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const current = new pg.Client({
      connectionString,
      keepAlive: true,
      application_name: options.applicationName ?? 'notice-listener',
      connectionTimeoutMillis: 5000,
    });
    client = current;
    current.on('error', (error) => {
      void drop(current, error);
    });
    current.on('end', () => {
      void drop(current, new Error('connection ended'));
    });
    current.on('notification', (message) => {
      if (message.channel === channel && client === current) handlers.notice(message.payload ?? '');
    });
    try {
      await current.connect();
      await current.query(`listen ${current.escapeIdentifier(channel)}`);
    } catch (error) {
      void drop(current, error as Error);
      return;
    }
    if (client !== current || closed) return;
    delay = retryMs;
    listening = true;
    handlers.listening();
    heartbeat = setInterval(() => {
      const timer = setTimeout(() => {
        void drop(current, new Error('heartbeat timed out'));
      }, heartbeatTimeoutMs);
      current.query('select 1').then(
        () => clearTimeout(timer),
        (error: Error) => {
          clearTimeout(timer);
          void drop(current, error);
        },
      );
    }, heartbeatMs);
    heartbeat.unref();
  }

  void connect();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      if (client) await drop(client);
    },
  };
}
