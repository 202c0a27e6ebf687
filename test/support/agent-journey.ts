import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { startLocalProviders, startMailServer, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import type { Test } from 'tap';
import { runContainers } from './containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './journey.ts';

/**
 * The stage of a journey with real agents: the platform as `npm start` runs it (every service and
 * worker, the development billing and mailbox, the local model server, the real OpenClaw image) on
 * this file's own container instance, with `env` (and `options`) on top. At the end the agents it was told of are
 * deleted through the backend (as their owners' own), the platform stops and its containers go.
 */
export async function startAgentJourney(
  t: Test,
  env: Record<string, string>,
  options: Omit<Parameters<typeof startWholePlatform>[1] & object, 'listenTimeoutMs'> = {},
) {
  const containers = runContainers();
  const model = await startLocalProviders(t);
  const mailbox = await startMailServer(t);
  const platform = await startWholePlatform(
    {
      RUNTIME_INSTANCE: containers.own,
      AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
      AGENT_READY_TIMEOUT_MS: '420000',
      OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
      OPENAI_API_KEY: model.env.OPENAI_API_KEY,
      SMTP_URL: mailbox.url,
      BILLING_PROVIDER: 'local',
      ...env,
    },
    { listenTimeoutMs: 180_000, ...options },
  );
  const agents: { id: string; owner: string }[] = [];
  t.teardown(async () => {
    for (const { id, owner } of agents)
      await fetch(`${platform.backendUrl}/api/agents/${id}`, {
        method: 'DELETE',
        // A delete waits for the gateway to exit, which takes long on a loaded machine.
        signal: AbortSignal.timeout(240_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      }).catch(() => undefined);
    await platform.stop();
    await containers.removeOurs();
  });
  const client = () => new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);

  return {
    ...containers,
    model,
    mailbox,
    platform,
    /** A browser-less web client of the platform, signed in to nobody yet. */
    client,
    /** A new person: registered, verified from the mailbox, and subscribed to `plan` at the development checkout. */
    async subscriber(
      tag: string,
      plan: string,
    ): Promise<{ web: WebClient; userId: string; email: string; password: string }> {
      const web = client();
      const email = uniqueEmail(tag);
      const password = `a ${tag} journey password`;
      const { userId, verified } = await registerAndVerify(web, mailbox, email, password);
      t.equal(verified, 200, `${tag}: signed up and verified from the mail`);
      t.equal(await payAtLocalCheckout(web, plan), 303, `${tag}: subscribed to ${plan} at the development checkout`);
      return { web, userId, email, password };
    },
    /**
     * An agent provisioned through the edge by `web`'s user, `owner` (deleted at the end): its id, its
     * status as the owner reads it (`HTTP <code>` when not answered), and the status it settles in
     * once it leaves provisioning.
     */
    async provision(web: WebClient, owner: string, name: string) {
      const provisioned = await web.request('POST', '/api/agents/provision', { name });
      t.equal(provisioned.status, 201, 'provisioning accepted');
      const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
      agents.push({ id, owner });
      const status = async () => {
        const res = await web.request('GET', `/api/agents/${id}`);
        return res.status === 200
          ? ((await res.json()) as { agent: { status: string } }).agent.status
          : `HTTP ${res.status}`;
      };
      const settled = () =>
        observe(status, (s) => !['pending', 'provisioning', 'HTTP 429'].includes(s), {
          everyMs: 1000,
          deadlineMs: 540_000,
          what: 'the agent leaving provisioning',
        });
      return { id, status, settled };
    },
    /** An agent to delete at the end, whatever the test did to it. */
    removeAtEnd(id: string, owner: string): void {
      agents.push({ id, owner });
    },
  };
}
