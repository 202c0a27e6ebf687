// The platform as `npm start` runs it, for benchmarks of real agents: its own database, queue prefix
// and runtime instance, a development mailbox, and a model server that answers at once
// (bench/chat/model-server.ts, its own process) as the AI gateway's only provider. Everything it
// made goes at `close()`: the agents (deleted as an operator does), their containers and
// directories, the database.
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { startWholePlatform } from '@agentyard/testing';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { startMailbox } from '../../scripts/lib/mailbox.ts';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { runtimeConfigDir } from '../../services/agents/src/domain/runtime/privileged/runtime-context.ts';
import { WebClient } from '../../test/support/journey.ts';

export { percentile } from '../rounds.ts';
export const ms = (x: number) => x.toFixed(1);

/** Longest a real OpenClaw agent may take from provisioning to `running` on a loaded 2-core machine. */
const RUNNING_DEADLINE_MS = 540_000;

export async function startAgentBench(options: { name: string; portRange: string; env?: Record<string, string> }) {
  const modelServer = fork(join(import.meta.dirname, '../chat/model-server.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const modelPort = await new Promise<number>((resolve, reject) => {
    modelServer.once('message', (message) => resolve((message as { port: number }).port));
    modelServer.once('exit', (code) => reject(new Error(`the model server exited with ${code}`)));
  });
  const modelUrl = `http://127.0.0.1:${modelPort}`;

  ensureDataServices();
  const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
  const urls = await prepareDatabase(database);
  const prefix = `bench-${options.name}-${randomUUID().slice(0, 8)}`;
  const mailbox = await startMailbox({ smtpPort: 0, webPort: 0 });
  const env: Record<string, string> = {
    ...urls,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    QUEUE_PREFIX: prefix,
    RUNTIME_INSTANCE: prefix,
    IDENTITY_SECRET: randomBytes(32).toString('base64url'),
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
    PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
    SMTP_URL: mailbox.smtpUrl,
    BILLING_PROVIDER: 'local',
    AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
    AGENT_PORT_RANGE: options.portRange,
    AGENT_READY_TIMEOUT_MS: '420000',
    OPENAI_BASE_URL: `${modelUrl}/v1`,
    OPENAI_API_KEY: 'bench-provider-key',
    // Every turn is counted by the web chat's and the agent's model-call limits (60 and 120 a minute).
    RATE_LIMITS: 'web-chat=1000000,backend-agent-chat=1000000',
    ...options.env,
  };
  Object.assign(env, await preparePlatformExtras({ ...process.env, ...env }), { RUNTIME_INSTANCE: prefix });
  if (env.RUNTIME_DRIVER !== 'docker' || !env.EDGE_AGENT_HOST)
    throw new Error(`bench/${options.name} needs a container engine and a host address for the edge's agent listener`);
  const docker = new Docker({ socketPath: env.DOCKER_HOST!.replace('unix://', '') });
  const platform = await startWholePlatform(env, { listenTimeoutMs: 180_000 });
  const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });
  const agents: string[] = [];
  const provision = async (web: WebClient, name = 'bench'): Promise<string> => {
    const provisioned = await web.request('POST', '/api/agents/provision', { name });
    if (provisioned.status !== 201)
      throw new Error(`provision answered ${provisioned.status}: ${await provisioned.text()}`);
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    agents.push(id);
    return id;
  };

  return {
    env,
    prefix,
    platform,
    docker,
    system,
    modelUrl,
    /** How many model calls the model server has answered. */
    modelCalls: async () =>
      ((await (await fetch(`${modelUrl}/count`, { signal: AbortSignal.timeout(5000) })).json()) as { answered: number })
        .answered,

    /** A signed-in user (session cookie) with an active subscription of `plan`. */
    async subscribedUser(plan = 'solo') {
      const web = new WebClient(platform.webUrl, env.PUBLIC_BASE_URL!);
      const email = `${prefix}-${randomBytes(3).toString('hex')}@bench.invalid`;
      const registered = await web.request('POST', '/api/register', {
        email,
        password: 'a bench password',
        name: 'bench',
      });
      if (registered.status !== 201) throw new Error(`register answered ${registered.status}`);
      const { id: userId } = (await registered.json()) as { id: string };
      if ((await web.request('POST', '/api/auth/login', { email, password: 'a bench password' })).status !== 200)
        throw new Error('login failed');
      await system
        .insertInto('subscriptions')
        .values({
          id: `sub_${prefix}_${randomBytes(3).toString('hex')}`,
          user_id: userId,
          status: 'active',
          plan,
          updated_at: new Date(),
        })
        .execute();
      return { web, userId };
    },

    /** Provisions an agent through the edge (deleted at `close()`). */
    provision,

    /** Provisions an agent through the edge and waits for `running`; `runningAfterMs` from the POST. */
    async runningAgent(web: WebClient, name = 'bench'): Promise<{ id: string; runningAfterMs: number }> {
      const started = Date.now();
      const id = await provision(web, name);
      for (let status = 'provisioning'; status !== 'running'; ) {
        if (Date.now() - started > RUNNING_DEADLINE_MS)
          throw new Error(`the agent did not run within ${RUNNING_DEADLINE_MS / 1000} s (${status})`);
        await new Promise((resolve) => setTimeout(resolve, 1000)); // the status has no event on this surface; once a second is within its rate limit
        status = (await system.selectFrom('agents').select('status').where('id', '=', id).executeTakeFirstOrThrow())
          .status;
        if (status === 'error') throw new Error('the agent ended in error');
      }
      return { id, runningAfterMs: Date.now() - started };
    },

    async close() {
      // Deleted as an operator does, so the platform releases each agent's state disk and port.
      for (const id of agents)
        await fetch(`${platform.backendUrl}/api/agents/${id}`, {
          method: 'DELETE',
          signal: AbortSignal.timeout(60_000),
          headers: { authorization: `Bearer ${env.INTERNAL_API_KEY}` },
        }).catch(() => undefined);
      await system.destroy();
      await platform.stop();
      for (const c of await docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${prefix}`] } }))
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
      await rm(join(runtimeConfigDir({ RUNTIME_CONFIG_DIR: env.RUNTIME_CONFIG_DIR ?? '' }), prefix), {
        recursive: true,
        force: true,
      }); // the agents' config and state directories
      await mailbox.close();
      modelServer.kill();
      await dropDatabase(ADMIN_URL, database);
    },
  };
}

/** A started platform for a benchmark, with its helpers and its `close()`. */
export type AgentBench = Awaited<ReturnType<typeof startAgentBench>>;
