import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createSystemDb, type SystemDb } from '@agentyard/db/system';

declare module 'fastify' {
  interface FastifyInstance {
    /** The cross-user connection (workers' work done in a request, API-key backend routes). */
    systemDb: SystemDb;
  }
}

export interface SystemDbOptions {
  url: string;
  poolSize?: number;
  applicationName?: string;
  /** A pool someone else owns (tests share one): used, never closed here. */
  db?: SystemDb;
}

export default fp(
  async function systemDbPlugin(app: FastifyInstance, options: SystemDbOptions) {
    const db =
      options.db ?? createSystemDb(options.url, { max: options.poolSize, applicationName: options.applicationName });
    app.decorate('systemDb', db);
    if (!options.db) app.addHook('onClose', async () => db.destroy());
  },
  { name: 'agentyard-system-db', fastify: '5.x' },
);
