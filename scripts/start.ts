// `npm start`: brings the whole platform up on this machine and keeps it in the foreground.
import { ensureDevSecrets, DEV_SECRETS_FILE } from '@agentyard/config';
import { opsAddress } from '@agentyard/observability';
import { ensureDataServices, prepareDatabase } from './lib/platform.ts';
import { compileCacheEnv, platformProcesses, startProcess, stopAll, waitForReady } from './lib/processes.ts';
import { PROCESS_DRIVER_BANNER, preparePlatformExtras } from './lib/extras.ts';
import { startMailbox, type Mailbox } from './lib/mailbox.ts';
import { ensureConsoleBuilt } from './lib/console.ts';

// The console is built before the edge starts, which serves what it finds (rebuilt only when its sources changed).
ensureConsoleBuilt();
const secrets = ensureDevSecrets();
console.log(`development secrets: ${DEV_SECRETS_FILE}`);
ensureDataServices();
const database = process.env.DATABASE_NAME ?? 'agentyard';
const urls = await prepareDatabase(database);
console.log(`database ${database} migrated`);

// Without a mail server of one's own, mail goes to a local mailbox with a web inbox.
const mailbox: Mailbox | undefined = process.env.SMTP_URL
  ? undefined
  : await startMailbox({
      smtpPort: Number(process.env.MAILBOX_SMTP_PORT ?? 1025),
      webPort: Number(process.env.MAILBOX_WEB_PORT ?? 1080),
    });
const env: NodeJS.ProcessEnv = {
  ...secrets,
  ...urls,
  ...process.env,
  ...compileCacheEnv(),
  ...(mailbox ? { SMTP_URL: mailbox.smtpUrl } : {}),
  ...(await preparePlatformExtras(process.env)),
};
// One booted warm gateway for the first plan, so a new agent answers in seconds (docs/agent-runtime.md,
// warm pool; ~1.4 GB while it waits): RUNTIME_WARM_POOL= (empty) keeps none.
if (env.RUNTIME_DRIVER === 'docker' && process.env.RUNTIME_WARM_POOL === undefined) env.RUNTIME_WARM_POOL = 'solo=1';
// Children write to a pipe, not a terminal: readable lines are asked for when ours is one.
if (!env.LOG_FORMAT && process.stdout.isTTY) env.LOG_FORMAT = 'pretty';
const running = platformProcesses().map(({ name, entry }) => startProcess(name, entry, env));
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  console.log('stopping every process…');
  await stopAll(running);
  await mailbox?.close();
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
for (const r of running)
  void r.exited.then((code) => {
    if (!stopping) {
      console.error(`${r.name} exited (${code}); stopping the platform`);
      void stop(1);
    }
  });

const webPort = env.EDGE_WEB_PORT ?? '3000';
const backendPort = env.EDGE_BACKEND_PORT ?? '3001';
const webHost = env.EDGE_WEB_HOST ?? '127.0.0.1';
const backendHost = env.EDGE_BACKEND_HOST ?? '127.0.0.1';
try {
  // Every process (each service, each worker, the edge) says it is ready on its operations listener.
  await Promise.all(
    running.map((r) => {
      const { host, port } = opsAddress(r.name.replace(' ', '-'), env);
      return waitForReady(`http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`);
    }),
  );
} catch (error) {
  console.error(String(error));
  await stop(1);
}
console.log(`
Agentyard is up.
  console      http://${webHost}:${webPort}/            (open this in a browser; API docs: /api/docs)
  web API      http://${webHost}:${webPort}/api        (health: /api/health, OpenAPI: /api/openapi.json)
  backend API  http://${backendHost}:${backendPort}           (health: /health, OpenAPI: /openapi.json; Bearer key: INTERNAL_API_KEY in ${DEV_SECRETS_FILE})
  operations   /livez, /readyz, /metrics of each process on its own port (docs/operations.md: edge 9100, services 9101-9106, workers 9111-9116)
  mailbox      ${mailbox ? `${mailbox.inboxUrl}        (every mail the platform sends; SMTP ${mailbox.smtpUrl})` : `none: mail goes to SMTP_URL`}
Ctrl-C stops everything.`);
if ((env.NODE_ENV ?? 'development') === 'development')
  console.log(
    'development: ADMIN_EMAILS act as admins before their address is verified (elsewhere admin needs a verified email)',
  );
if (env.RUNTIME_DRIVER === 'process') console.warn(PROCESS_DRIVER_BANNER);
