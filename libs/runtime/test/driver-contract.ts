// What every runtime driver does, the same for each (docker: test/e2e/docker-driver-contract.test.ts,
// kubernetes: test/kubernetes/kubernetes-driver.test.ts): the lifecycle the platform relies on, run on
// a real engine or cluster with the minimal gateway image.
import { randomBytes, randomUUID } from 'node:crypto';
import { probeAgent } from '@agentyard/agent-gateway';
import type { Test } from 'tap';
import type { RuntimeDriver } from '../src/index.ts';

export interface ContractSubject {
  driver: RuntimeDriver;
  /** The minimal gateway image (infra/agent-image/build.sh), as the engine names it. */
  image: string;
  /** A host port for a new agent (drivers that publish ports use it). */
  hostPort(): Promise<number>;
  /** How long a gateway may take to answer after start (a cluster schedules first). */
  readyTimeoutMs: number;
}

const MB = 1024 ** 2;

/** Until the gateway at `url` answers ready (a probe every 200 ms: the gateway announces nothing). */
export async function gatewayReady(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await probeAgent(url, 1000)).ready) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/** The config a contract agent runs with: hooks on, with a token of its own (a hook call proves the config arrived). */
export function contractConfig(hooksToken: string): string {
  return JSON.stringify({ gateway: { port: 18789 }, hooks: { enabled: true, token: hooksToken, path: '/hooks' } });
}

export function driverContract(t: Test, subject: ContractSubject): void {
  const { driver } = subject;

  t.test('contract: the engine answers; unknown ids are idempotent no-ops', async (t) => {
    const version = await driver.version();
    t.ok(version.engine && version.version, `engine ${version.engine} ${version.version}`);
    t.equal(await driver.inspect(`agent-${randomUUID()}`), null, 'inspect of a missing container: null');
    await driver.remove(`agent-${randomUUID()}`);
    await driver.removeState(randomUUID());
    t.pass('remove and removeState of missing things succeed');
  });

  t.test('contract: create, start, answer, stop, start, restart, remove', async (t) => {
    const agentId = randomUUID();
    const userId = randomUUID();
    const hooksToken = randomBytes(16).toString('hex');
    const hostPort = await subject.hostPort();
    const created = Date.now();
    const id = await driver.create({
      agentId,
      userId,
      image: subject.image,
      hostPort,
      config: contractConfig(hooksToken),
      secretFiles: { 'contract.token': 'not-in-any-answer' },
      resources: { memoryBytes: 256 * MB, cpus: 0.5 },
    });
    t.teardown(async () => {
      await driver.remove(id);
      await driver.removeState(agentId);
    });

    const fresh = (await driver.inspect(id))!;
    t.match(fresh, { id, agentId, userId, state: 'created' }, 'created, not started');
    t.ok(
      (await driver.list({ agentId })).some((c) => c.id === id),
      'listed under its agent',
    );
    t.notOk(
      (await driver.list({ agentId: randomUUID() })).some((c) => c.id === id),
      "not under another's",
    );

    await driver.start(id);
    const url = driver.gatewayUrl(hostPort, agentId);
    t.ok(await gatewayReady(url, subject.readyTimeoutMs), `the gateway answers at ${url}`);
    t.comment(`created to ready: ${Date.now() - created} ms`);
    const running = (await driver.inspect(id))!;
    t.equal(running.state, 'running');
    t.ok(running.startedAt, 'a start time');

    const hook = await fetch(new URL('/hooks/wake', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${hooksToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'contract' }),
      signal: AbortSignal.timeout(5000),
    });
    t.equal(hook.status, 200, 'the gateway runs with the config it was created with (its hooks token works)');

    const logs = (await driver.logs?.(id, 50)) ?? [];
    t.ok(
      logs.some((l) => /listening on/.test(l.text)),
      "the gateway's output is in its logs",
    );
    t.ok(
      logs.every((l) => l.time && !Number.isNaN(Date.parse(l.time.replace(/(\.\d{3})\d+/, '$1')))),
      'each line has its time',
    );
    const stats = await driver.stats(id);
    t.ok(stats && stats.memoryBytes > 0, 'stats of the running gateway');

    await driver.stop(id);
    t.equal((await driver.inspect(id))!.state, 'stopped', 'stopped');
    t.notOk((await probeAgent(url, 1000)).live, 'nothing answers once stopped');
    await driver.stop(id);
    t.pass('stopping a stopped container succeeds');

    await driver.start(id);
    const url2 = driver.gatewayUrl(hostPort, agentId);
    t.ok(await gatewayReady(url2, subject.readyTimeoutMs), 'started again, it answers');
    const before = (await driver.inspect(id))!.startedAt;

    await driver.restart(id);
    const url3 = driver.gatewayUrl(hostPort, agentId);
    t.ok(await gatewayReady(url3, subject.readyTimeoutMs), 'restarted, it answers');
    const after = (await driver.inspect(id))!;
    t.equal(after.state, 'running');
    t.not(after.startedAt, before, 'a restart is a new run');

    await driver.remove(id);
    t.equal(await driver.inspect(id), null, 'removed');
    t.same(await driver.list({ agentId }), [], 'nothing listed for the agent');
    await driver.remove(id);
    await driver.removeState(agentId);
    t.pass('removing twice succeeds');
  });
}
