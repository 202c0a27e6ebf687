import {
  AbortedTransactionError,
  CompiledQuery,
  PostgresDialect,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';

interface Marking {
  /** Sent without waiting for the answer: the next awaited statement goes out in the same write. */
  ahead?: boolean;
  /** A named prepared statement: PostgreSQL parses and plans it once per connection. */
  name?: string;
}

const markings = new WeakMap<CompiledQuery<unknown>, Marking>();

/**
 * Marks a statement whose answer nobody reads (BEGIN, the row-level-security context) to be sent
 * ahead of the next one. It still runs in order on the same connection; if it fails, the next
 * awaited statement on the connection throws its error (inside a transaction nothing after it runs).
 */
export function sendAhead<R>(query: CompiledQuery<R>, name?: string): CompiledQuery<R> {
  markings.set(query, { ahead: true, name });
  return query;
}

/** Marks a hot statement of constant text to run as a named prepared statement. */
export function prepared<R>(query: CompiledQuery<R>, name: string): CompiledQuery<R> {
  markings.set(query, { name });
  return query;
}

const COUNTED_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** The parts of pg's protocol connection and Query that pg-cursor also builds on. */
interface ProtocolConnection {
  parsedStatements: Record<string, string | undefined>;
  stream: { cork(): void; uncork(): void };
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { statement: string; values: unknown[] }): void;
  execute(message: { portal: string }): void;
}
interface ProtocolQuery {
  submit(connection: ProtocolConnection): Error | null;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void;
}
type QueryCallback = (error: Error | null, result: pg.QueryResult) => void;
const ProtocolQuery = pg.Query as unknown as new (config: {
  text: string;
  values: unknown[];
  queryMode: 'extended';
  callback: QueryCallback;
}) => ProtocolQuery;

/**
 * A named prepared statement whose answer is ignored, then a statement, in one exchange ending in
 * one Sync: PostgreSQL runs both in one implicit transaction, so a `set_config(..., true)` in the
 * first holds for the second only. If the first fails, the second does not run.
 */
class StatementAfter extends ProtocolQuery {
  readonly #first: { name: string; text: string; values: unknown[] };
  #firstDone = false;

  constructor(first: { name: string; text: string; values: unknown[] }, query: CompiledQuery, callback: QueryCallback) {
    super({ text: query.sql, values: query.parameters as unknown[], queryMode: 'extended', callback });
    this.#first = first;
  }

  override submit(connection: ProtocolConnection): Error | null {
    const { name, text, values } = this.#first;
    connection.stream.cork();
    try {
      if (connection.parsedStatements[name] === undefined) {
        connection.parse({ text, name, types: [] });
        connection.parsedStatements[name] = text;
      }
      connection.bind({ statement: name, values });
      connection.execute({ portal: '' });
      return super.submit(connection);
    } finally {
      connection.stream.uncork();
    }
  }

  override handleDataRow(message: unknown): void {
    if (this.#firstDone) super.handleDataRow(message);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    if (this.#firstDone) super.handleCommandComplete(message, connection);
    else this.#firstDone = true;
  }
}

function queryResult<R>({ command, rowCount, rows }: pg.QueryResult): QueryResult<R> {
  if (command === 'COMMIT' || command === 'ROLLBACK') return { rows: [{ command } as R] };
  return {
    rows: (rows ?? []) as R[],
    numAffectedRows: COUNTED_COMMANDS.has(command) ? BigInt(rowCount ?? 0) : undefined,
  };
}

/** One pooled client in pg's pipeline mode. */
export class PipelinedConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  #ahead: Promise<unknown>[] = [];
  #corked = false;
  discarded = false;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.discarded) throw new Error('Postgres connection has been discarded');
    const marking = markings.get(query);
    const config = { text: query.sql, values: query.parameters as unknown[], name: marking?.name };
    if (marking?.ahead) {
      this.#cork();
      const sent = this.client.query(config);
      sent.catch(() => {
        /* reported by the next awaited statement */
      });
      this.#ahead.push(sent);
      return { rows: [] };
    }
    const answer = this.client.query(config);
    this.#uncork();
    if (this.#ahead.length) {
      const ahead = this.#ahead;
      this.#ahead = [];
      try {
        await Promise.all(ahead);
      } catch (error) {
        answer.catch(() => {
          /* the earlier failure is the one to report */
        });
        throw error;
      }
    }
    return queryResult<R>(await answer);
  }

  /** Runs `first` (a named prepared statement) and then `query` in one implicit transaction, one round trip. */
  async executeAfter<R>(
    first: { name: string; text: string; values: unknown[] },
    query: CompiledQuery,
  ): Promise<QueryResult<R>> {
    if (this.discarded) throw new Error('Postgres connection has been discarded');
    const result = await new Promise<pg.QueryResult>((resolve, reject) => {
      this.client.query(
        new StatementAfter(first, query, (error, answer) => (error ? reject(error) : resolve(answer))) as never,
      );
    });
    return queryResult<R>(result);
  }

  // biome-ignore lint/correctness/useYield: streaming is not configured, as with kysely's own driver without a cursor
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported');
  }

  /** Holds writes in the socket until the next awaited statement, so they leave in one write. */
  #cork() {
    if (this.#corked) return;
    this.#socket()?.cork();
    this.#corked = true;
  }

  #uncork() {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket()?.uncork();
  }

  #socket(): { cork(): void; uncork(): void } | undefined {
    return (this.client as unknown as { connection?: { stream?: { cork(): void; uncork(): void } } }).connection
      ?.stream;
  }
}

/**
 * kysely's PostgreSQL driver, with pooled clients in pg's pipeline mode: BEGIN is sent ahead of the
 * transaction's first statement, so a transaction costs one round trip for its start and its first
 * statement together, then one per statement and one for COMMIT.
 */
class PipelinedPostgresDriver implements Driver {
  #pool: pg.Pool | undefined;
  readonly #connections = new WeakMap<pg.PoolClient, PipelinedConnection>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<PipelinedConnection> {
    if (!this.#pool) throw new Error('driver has already been destroyed');
    const client = await this.#pool.connect();
    let connection = this.#connections.get(client);
    if (!connection) this.#connections.set(client, (connection = new PipelinedConnection(client)));
    return connection;
  }

  async beginTransaction(connection: PipelinedConnection, settings: TransactionSettings): Promise<void> {
    let text = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      text = [
        'start transaction',
        settings.isolationLevel && `isolation level ${settings.isolationLevel}`,
        settings.accessMode,
      ]
        .filter(Boolean)
        .join(' ');
    }
    await connection.executeQuery(sendAhead(CompiledQuery.raw(text)));
  }

  async commitTransaction(connection: PipelinedConnection): Promise<void> {
    const { rows } = await connection.executeQuery<{ command: string }>(CompiledQuery.raw('commit'));
    // PostgreSQL completes COMMIT with a ROLLBACK tag when an earlier error left the transaction aborted.
    if (rows[0]?.command === 'ROLLBACK') throw new AbortedTransactionError();
  }

  async rollbackTransaction(connection: PipelinedConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } catch (error) {
      connection.discarded = true;
      throw error;
    }
  }

  async releaseConnection(connection: PipelinedConnection): Promise<void> {
    connection.client.release(connection.discarded);
  }

  async destroy(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}

/** The PostgreSQL dialect over a pool whose clients were created with `pipeline: true`. */
export class PipelinedPostgresDialect extends PostgresDialect {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    super({ pool });
    this.#pool = pool;
  }

  override createDriver(): Driver {
    return new PipelinedPostgresDriver(this.#pool);
  }
}
