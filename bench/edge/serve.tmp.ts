import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { signIdentity } from '@agentyard/identity';
import { dropDatabase } from '@agentyard/db/admin';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const secret = randomBytes(32).toString('base64url');
const platform = await startPlatform(['auth'], {
  ...urls, NODE_ENV: 'production', LOG_LEVEL: 'warn', IDENTITY_SECRET: secret, IDENTITY_TTL_SECONDS: '300',
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'), ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  SESSION_SECRET: randomBytes(32).toString('base64url'), QUEUE_PREFIX: `bench-${randomUUID()}`,
  ...(process.env.PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROF}` } : {}),
});
const json = { 'content-type': 'application/json' };
const email = `bench-${randomUUID()}@example.test`;
await fetch(`${platform.webUrl}/api/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'benchmark password' }) });
const login = await fetch(`${platform.webUrl}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'benchmark password' }) });
const { user } = await login.json() as { user: { id: string } };
const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
const identity = signIdentity({ surface: 'web', auth: 'session', userId: user.id, email, admin: false, sessionId: null, requestId: 'bench-direct' }, secret, 300);
writeFileSync('/tmp/edge-perf/serve.env', `EDGE=${platform.webUrl}/api/auth/session\nDIRECT=http://127.0.0.1:${platform.env.AUTH_PORT}/api/auth/session\nCOOKIE='${cookie}'\nIDENT='${identity}'\nDB=${database}\n`);
console.log('ready');
process.on('SIGINT', async () => { await platform.stop(); await dropDatabase(ADMIN_URL, database); process.exit(0); });
setInterval(() => {}, 1 << 30);
