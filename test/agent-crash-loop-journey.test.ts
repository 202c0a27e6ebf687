import t from 'tap';
import { startMailServer, startWholePlatform, systemDb, unfold, uniqueEmail } from '@agentyard/testing';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './support/journey.ts';

// Issue 29's crash loop as an owner meets it, on the platform as `npm start` runs it (the agents
// worker follows the engine, the auth worker sends mail) with the minimal gateway image: the agent's
// process dies three times within five minutes; after the third it is not started again, its status
// is `error` with the reason, and the owner's mail arrives at the SMTP server with a link to it.
t.setTimeout(900_000);

const MINIMAL = 'localhost/agentyard-gateway-minimal:1';

t.test(
  'three exits in five minutes: error with the reason, no more restarts, and the owner’s mail',
  { skip: noAgentContainers },
  async (t) => {
    const { own, docker, removeOurs } = runContainers();
    const mailbox = await startMailServer(t);
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: MINIMAL,
        AGENT_PORT_RANGE: '30800-30899',
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
        // The status is asked often while the agent restarts: no rate limit in the way.
        RATE_LIMITS: 'web-gateway=1000000',
      },
      { listenTimeoutMs: 180_000 },
    );
    t.teardown(async () => {
      await platform.stop();
      await removeOurs();
    });

    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    const email = uniqueEmail('crash-loop');
    await registerAndVerify(web, mailbox, email, 'a crash loop password');
    t.equal(await payAtLocalCheckout(web, 'solo'), 303, 'subscribed at the development checkout');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Brittle' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    const agent = async () => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string; lastError: string | null } }).agent
        : { status: `HTTP ${res.status}`, lastError: null };
    };
    /** How many times the owner's events say the watchdog restarted it. */
    const restarts = async () => {
      const res = await web.request('GET', `/api/agents/${id}/events`);
      return res.status === 200
        ? ((await res.json()) as { events: { kind: string }[] }).events.filter((e) => e.kind === 'restarted').length
        : -1;
    };
    t.equal(
      (
        await observe(agent, (a) => a.status !== 'provisioning', {
          everyMs: 500,
          deadlineMs: 180_000,
          what: 'the agent leaving provisioning',
        })
      ).status,
      'running',
    );

    const kill9 = async () => {
      const { container_id: containerId } = await systemDb()
        .selectFrom('agents')
        .select('container_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const pid = (await docker.getContainer(containerId!).inspect()).State.Pid;
      process.kill(pid, 'SIGKILL');
      return containerId!;
    };
    const mailed = mailbox.nextMail((mail) => mail.to.includes(email.toLowerCase()) && /keeps crashing/.test(mail.raw));
    for (const which of [1, 2]) {
      await kill9();
      await observe(restarts, (n) => n === which, { everyMs: 200, deadlineMs: 120_000, what: `restart ${which}` });
      t.equal((await agent()).status, 'running', `running again after exit ${which}`);
    }
    const containerId = await kill9();
    const message = unfold((await mailed).raw);
    t.match(message, /Subject: Your agent Brittle keeps crashing/, "the owner's mail arrived");
    t.ok(message.includes(`/agents/${id}`), "with a link to the agent's page");
    t.match(
      await agent(),
      { status: /^error$/, lastError: 'Crash loop: it exited 3 times in 5 minutes and is no longer restarted' },
      'the owner reads why',
    );
    t.equal((await docker.getContainer(containerId).inspect()).State.Running, false, 'it is not started again');
    const events = (await (await web.request('GET', `/api/agents/${id}/events`)).json()) as {
      events: { kind: string }[];
    };
    t.equal(events.events[0]?.kind, 'crash-loop', 'the crash loop heads its events');
    t.equal(events.events.filter((e) => e.kind === 'exit').length, 3, 'after three exits');
  },
);
