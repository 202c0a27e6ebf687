import t from 'tap';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { startLocalProviders, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import { observe, subscribeThroughStripeWebhook, WebClient } from './support/journey.ts';

// A new user's journey on the platform as `npm start` runs it (every service and worker, the edge
// with its agent listener, the real OpenClaw image in the container engine), with a local server
// speaking OpenAI's chat-completions wire format as the AI gateway's only provider: sign up,
// subscribe, provision, prompt the agent, and see what its thinking cost. Heavy (~1.4 GB, a core
// for a minute while the gateway boots): one agent, removed when the test ends.
t.setTimeout(1_500_000);

const engine = process.env.RUNTIME_DRIVER === 'docker' && process.env.DOCKER_HOST;
const skip = !engine ? 'no container engine' : !process.env.EDGE_AGENT_HOST ? 'no host address for the edge\'s agent listener' : false;

t.test('a subscriber\'s agent thinks through the platform\'s own AI gateway, reached at the edge\'s agent listener', { skip }, async (t) => {
  const own = process.env.QUEUE_PREFIX!;
  const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
  const ours = () => docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${own}`] } });
  const model = await startLocalProviders(t);
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const platform = await startWholePlatform({
    RUNTIME_INSTANCE: own, AGENT_IMAGE: DEFAULT_AGENT_IMAGE, AGENT_PORT_RANGE: '37000-37999', AGENT_READY_TIMEOUT_MS: '420000',
    // The only provider of the AI gateway: the local OpenAI-wire server.
    OPENAI_BASE_URL: model.env.OPENAI_BASE_URL, OPENAI_API_KEY: model.env.OPENAI_API_KEY,
    STRIPE_WEBHOOK_SECRET: webhookSecret,
    LOG_LEVEL: 'info',
  }, { logsOf: ['edge'], listenTimeoutMs: 180_000 });
  const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
  let owner = '';
  let agentId: string | undefined;
  // The platform's own backend caller (internal API key) removes the agent, as an operator would.
  const backend = (method: string, path: string) => fetch(`${platform.backendUrl}${path}`, { method, headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner }, signal: AbortSignal.timeout(60_000) });
  t.teardown(async () => {
    if (agentId) await backend('DELETE', `/api/agents/${agentId}`).catch(() => undefined);
    await platform.stop();
    for (const c of await ours()) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
  });
  t.ok(platform.agentUrl, `the edge's agent listener: ${platform.agentUrl}`);
  t.notMatch(platform.agentUrl!, /\/\/(127\.|localhost)/, 'on the host\'s own address, not loopback');

  // 1. Register and sign in.
  const email = uniqueEmail('journey');
  const registered = await web.request('POST', '/api/register', { email, password: 'a journey password', name: 'Journey' });
  t.equal(registered.status, 201, 'registered');
  const { id: userId } = (await registered.json()) as { id: string };
  owner = userId;
  const login = await web.request('POST', '/api/auth/login', { email, password: 'a journey password' });
  t.equal(login.status, 200, 'signed in');
  t.ok(web.signedIn, 'with the session cookie');

  // Without a plan nothing can be provisioned.
  const refused = await web.request('POST', '/api/agents/provision', { name: 'Too early' });
  t.equal(refused.status, 403);
  t.equal(((await refused.json()) as { code: string }).code, 'SUBSCRIPTION_REQUIRED', 'no subscription, no agent');

  // 2. Subscribe to solo.
  const subscribed = await subscribeThroughStripeWebhook(platform.webUrl, webhookSecret, userId, 'solo');
  t.equal(subscribed.status, 200, 'the signed subscription event is accepted');
  t.same(await subscribed.json(), { received: true, duplicate: false });

  // 3. Provision, and wait for the agent to run.
  const provisionedAt = Date.now();
  const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Marigold' });
  t.equal(provisioned.status, 201, 'provisioning accepted');
  const { agent } = (await provisioned.json()) as { agent: { id: string; status: string } };
  agentId = agent.id;
  t.equal(agent.status, 'provisioning');
  // Once a second, within the web surface's rate limit on /api/agents (100 a minute); a 429 is asked again.
  const status = async () => {
    const res = await web.request('GET', `/api/agents/${agent.id}`);
    return res.status === 200 ? ((await res.json()) as { agent: { status: string } }).agent.status : `HTTP ${res.status}`;
  };
  const settled = await observe(status, (s) => s !== 'provisioning' && s !== 'HTTP 429', { everyMs: 1000, deadlineMs: 540_000, what: 'the agent leaving provisioning' });
  if (!t.equal(settled, 'running', 'the agent runs')) return;
  const provisioningMs = Date.now() - provisionedAt;
  t.comment(`provisioning → running: ${provisioningMs} ms`);
  const containers = await ours();
  t.same(containers.map((c) => [c.Image, c.State, c.Labels[LABELS.agentId]]), [[DEFAULT_AGENT_IMAGE, 'running', agent.id]], 'one container of the real OpenClaw image');

  // 4. A prompt reaches the agent through the scheduler's hook delivery; the agent asks the AI gateway.
  const word = `marigold-${randomBytes(4).toString('hex')}`;
  const prompt = `Answer with the single word ${word}.`;
  const second = (new Date(Date.now() + 5000).getUTCSeconds());
  const promptedAt = Date.now();
  const scheduled = await web.request('POST', '/api/scheduled-tasks', { name: 'Say the word', cronSchedule: `${second} * * * * *`, prompt, agentId: agent.id });
  t.equal(scheduled.status, 201, 'a prompt scheduled for the agent');
  const { id: taskId } = (await scheduled.json()) as { id: string };
  const delivered = await model.delivery((d) => JSON.stringify(d.body.messages ?? []).includes(word), 300_000);
  const modelCallMs = Date.now() - promptedAt;
  t.comment(`prompt scheduled → the model server got the agent's call: ${modelCallMs} ms`);
  // Once is enough: the next firing is a minute away.
  t.equal((await web.request('PUT', '/api/scheduled-tasks', { taskId, enabled: false })).status, 200, 'the schedule is stopped');

  t.equal(delivered.path, '/openai/v1/chat/completions', 'the OpenAI-wire provider got it');
  t.equal(delivered.body.model, 'gpt-4o-mini', 'on the model the solo plan picks among the usable ones (openai/gpt-4o-mini)');
  t.equal(delivered.headers.authorization, `Bearer ${model.env.OPENAI_API_KEY}`, 'with the platform\'s provider key, never the agent\'s');
  const messages = delivered.body.messages as { role: string; content: unknown }[];
  t.ok(messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes(prompt)), 'the agent sent the prompt as the user\'s turn');

  // The edge's agent listener served the agent's call (its requests are logged under its own name).
  const logged = (line: string) => { try { return JSON.parse(line) as { name?: string; msg?: string; reqId?: string; req?: { url?: string }; res?: { statusCode?: number } }; } catch { return {}; } };
  const incoming = logged(await platform.logs.waitFor('edge', (line) => {
    const entry = logged(line);
    return entry.name === 'edge-agents' && entry.msg === 'incoming request' && entry.req?.url === '/v1/chat/completions';
  }, 30_000));
  const completed = logged(await platform.logs.waitFor('edge', (line) => {
    const entry = logged(line);
    return entry.name === 'edge-agents' && entry.msg === 'request completed' && entry.reqId === incoming.reqId;
  }, 120_000));
  t.equal(completed.res?.statusCode, 200, 'the agent listener answered the agent\'s chat completion');

  // The agent got its answer: the gateway's transcript shows it.
  const answered = await observe(async () => (await (await web.request('GET', `/api/agents/${agent.id}/messages`)).json()) as { messages?: { role: string; text: string }[] },
    (m) => (m.messages ?? []).some((x) => x.role === 'assistant' && x.text.includes('Hello from the local provider')), { everyMs: 1000, deadlineMs: 180_000, what: 'the agent\'s answer' });
  t.ok(answered, 'the agent\'s answer is in its transcript');
  const turnMs = Date.now() - promptedAt;
  t.comment(`prompt scheduled → answer in the transcript: ${turnMs} ms`);

  // 5. What the thinking cost, for that agent, as the user sees it.
  type Summary = { agentId: string | null; usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number; calls: number } };
  const calls = () => model.delivered.filter((d) => d.path === '/openai/v1/chat/completions').length;
  const summary = await observe(async () => (await (await web.request('GET', `/api/usage/summary?agentId=${agent.id}&days=1`)).json()) as Summary,
    (s) => s.usage?.calls >= 1 && s.usage.calls === calls(), { everyMs: 500, deadlineMs: 60_000, what: 'the agent\'s usage' });
  t.equal(summary.agentId, agent.id);
  const n = summary.usage.calls;
  t.match(summary.usage, { inputTokens: 11 * n, outputTokens: 7 * n, totalTokens: 18 * n }, `the tokens of the agent's ${n} call(s), as the provider counted them`);
  t.ok(summary.usage.costUsd > 0, `and their cost: ${summary.usage.costUsd} USD`);
  const everything = (await (await web.request('GET', '/api/usage/summary?days=1')).json()) as Summary;
  t.same(everything.usage.calls, n, 'the user\'s own usage is the agent\'s');

  const removed = await backend('DELETE', `/api/agents/${agent.id}`);
  t.same(await removed.json(), { id: agent.id, deleted: true });
  agentId = undefined;
  t.same(await ours(), [], 'no container left');
  t.comment(`timings: provisioning → running ${provisioningMs} ms; prompt → model call ${modelCallMs} ms; prompt → answer ${turnMs} ms`);
});
