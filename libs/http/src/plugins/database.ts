import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createAppDb, withUser, withUserStatement, type AppDb, type UserTx } from '@agentyard/db';

declare module 'fastify' {
  interface FastifyInstance {
    db: AppDb;
  }
  interface FastifyRequest {
    /** Runs `work` in one transaction scoped by row-level security to the caller. */
    asUser<T>(work: (trx: UserTx) => Promise<T>): Promise<T>;
    /** `asUser` for work of exactly one statement: one round trip to the database. */
    asUserStatement<T>(work: (trx: UserTx) => Promise<T>): Promise<T>;
  }
}

export default fp(
  async function databasePlugin(app: FastifyInstance, options: { url: string; poolSize?: number; db?: AppDb }) {
    const db = options.db ?? createAppDb(options.url, { max: options.poolSize, applicationName: app.serviceName });
    app.decorate('db', db);
    app.decorateRequest('asUser', function asUser<
      T,
    >(this: { identity: { userId: string | null } }, work: (trx: UserTx) => Promise<T>) {
      return withUser(db, this.identity?.userId ?? null, work);
    });
    app.decorateRequest('asUserStatement', function asUserStatement<
      T,
    >(this: { identity: { userId: string | null } }, work: (trx: UserTx) => Promise<T>) {
      return withUserStatement(db, this.identity?.userId ?? null, work);
    });
    if (!options.db) app.addHook('onClose', async () => db.destroy());
  },
  { name: 'agentyard-database' },
);
