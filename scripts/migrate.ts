// Applies pending migrations to the development database (npm start does this too).
import { ensureDataServices, prepareDatabase } from './lib/platform.ts';

// With an explicit admin URL the database is elsewhere (docker-compose); locally, start it.
if (!process.env.DATABASE_ADMIN_URL) ensureDataServices();
await prepareDatabase(process.env.DATABASE_NAME ?? 'agentyard');
console.log('migrations applied');
