import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { repoRoot } from '@agentyard/config';
import {
  AGENT_BRIDGE_PREFIX,
  agentGatewayHost,
  createRuntimeDriver,
  PEER_ALIAS_LABEL,
  PEER_LABEL,
  resourcesFor,
} from '@agentyard/runtime';
import Docker from 'dockerode';
import t from 'tap';

// Issue 27 (N8): on a shared network (compose) every agent reached every other agent's gateway and
// whatever else it listened on. Now each agent has an internal network of its own, joined by the
// platform's peers (the egress proxy, the processes that call gateways): the peers reach every agent
// by name, an agent reaches the peers and no other agent, by name or by address. Real networks and
// containers on the machine's engine.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const noEngine = process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine';
t.setTimeout(300_000);

const docker = () => new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
const unreachable = /^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|TimeoutError)$/;

/** An HTTP status, or the network error's code, as `container` gets it from `url`. */
async function statusFrom(container: string, url: string): Promise<string> {
  const exec = await docker()
    .getContainer(container)
    .exec({
      Cmd: [
        'node',
        '-e',
        `fetch(${JSON.stringify(url)}, {signal: AbortSignal.timeout(3000)}).then(r => process.stdout.write(String(r.status)), e => process.stdout.write(String(e.cause?.code ?? e.name)))`,
      ],
      AttachStdout: true,
      AttachStderr: true,
      // A terminal: the output comes unframed.
      Tty: true,
    });
  const stream = await exec.start({ Tty: true });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

t.test(
  'each agent on a network of its own: peers reach every agent, no agent reaches another',
  { skip: noEngine },
  async (t) => {
    const instance = `nets-${randomBytes(4).toString('hex')}`;
    const base = `agentyard-nets-test-${randomBytes(4).toString('hex')}`;
    await docker().createNetwork({ Name: base, Internal: true });
    const driver = createRuntimeDriver({
      RUNTIME_DRIVER: 'docker',
      DOCKER_HOST: process.env.DOCKER_HOST!,
      RUNTIME_INSTANCE: instance,
      AGENT_IMAGE: MINIMAL,
      RUNTIME_PUBLISH_HOST: '127.0.0.1',
      RUNTIME_DATA_DIR: '',
      RUNTIME_STOP_TIMEOUT_SECONDS: 2,
      RUNTIME_ENGINE_TIMEOUT_MS: 30_000,
      RUNTIME_PIDS_LIMIT: 256,
      RUNTIME_NETWORK_MODE: '',
      RUNTIME_NETWORK: base,
      RUNTIME_CONFIG_DIR: '',
      repoRoot,
      NODE_ENV: 'production',
    });
    // A peer as compose labels one (the egress proxy): on the platform's network, answering as `egress`.
    const peer = await docker().createContainer({
      name: `agentyard-peer-${instance}`,
      Image: MINIMAL,
      Labels: { [PEER_LABEL]: instance, [PEER_ALIAS_LABEL]: 'egress' },
      HostConfig: { NetworkMode: base },
    });
    await peer.start();
    t.teardown(async () => {
      for (const c of await driver.list()) await driver.remove(c.id);
      await peer.remove({ force: true }).catch(() => undefined);
      for (const n of await docker().listNetworks({ filters: { label: [`agentyard.instance=${instance}`] } }))
        await docker()
          .getNetwork(n.Id)
          .remove()
          .catch(() => undefined);
      await docker()
        .getNetwork(base)
        .remove()
        .catch(() => undefined);
      await driver.close();
    });

    const agents = [randomUUID(), randomUUID()];
    const ids: string[] = [];
    for (const agentId of agents) {
      const id = await driver.create({
        agentId,
        userId: randomUUID(),
        image: MINIMAL,
        hostPort: 0,
        resources: resourcesFor('solo'),
        config: '{}',
      });
      await driver.start(id);
      ids.push(id);
    }
    const networksOf = async (id: string) => (await docker().getContainer(id).inspect()).NetworkSettings.Networks;
    const [a, b] = await Promise.all(ids.map(networksOf));
    t.same(Object.keys(a!), [`${base}-${agents[0]}`], 'the first agent is on its own network only');
    t.same(Object.keys(b!), [`${base}-${agents[1]}`], 'the second on its own');
    t.equal(
      (await docker().getNetwork(`${base}-${agents[0]}`).inspect()).Internal,
      true,
      'which is internal: no route out',
    );
    t.same(
      Object.keys(await networksOf(peer.id)).sort(),
      [base, `${base}-${agents[0]}`, `${base}-${agents[1]}`].sort(),
      'the peer joined both',
    );

    // The gateway answers once it is up: the peer asks until it does (or gives up after a minute).
    const health = (agentId: string) => `http://${agentGatewayHost(agentId)}:18789/healthz`;
    let answer = '';
    for (let i = 0; i < 20 && answer !== '200'; i++) answer = await statusFrom(peer.id, health(agents[1]!));
    t.equal(answer, '200', "the peer reaches the second agent's gateway by name");
    t.equal(await statusFrom(peer.id, health(agents[0]!)), '200', 'and the first');
    t.match(
      await statusFrom(ids[0]!, 'http://egress:18790/'),
      /^ECONNREFUSED$/,
      'an agent finds the peer by its alias (nothing listens on that port)',
    );

    t.match(
      await statusFrom(ids[0]!, health(agents[1]!)),
      unreachable,
      "an agent has no name for another agent's gateway",
    );
    const otherAddress = Object.values(b!)[0]!.IPAddress;
    t.match(
      await statusFrom(ids[0]!, `http://${otherAddress}:18789/healthz`),
      unreachable,
      `nor a route to its address (${otherAddress})`,
    );

    // The engine puts the network's gateway address on the host (its DNS answers there): a host service
    // listening on every address must not answer an agent there (the host's rules, infra/container-engine/up.sh).
    const hostService = createServer((_request, response) => response.end('host'));
    await new Promise<void>((resolve) => hostService.listen(0, '0.0.0.0', resolve));
    t.teardown(() => new Promise((resolve) => hostService.close(resolve)));
    const hostPort = (hostService.address() as AddressInfo).port;
    const ownNetwork = Object.values(a!)[0]!;
    t.ok(ownNetwork.Gateway, `the agent's network has a gateway on the host (${ownNetwork.Gateway})`);
    const bridge =
      Object.entries(networkInterfaces()).find(([, addresses]) =>
        addresses?.some((a) => a.address === ownNetwork.Gateway),
      )?.[0] ?? '';
    t.match(
      bridge,
      new RegExp(`^${AGENT_BRIDGE_PREFIX}`),
      `the host's side of it is a bridge named as the host's rules expect (${bridge})`,
    );
    const platformGateway = (await networksOf(peer.id))[base]!.Gateway;
    t.equal(
      await statusFrom(peer.id, `http://${platformGateway}:${hostPort}/`),
      '200',
      `the host service answers at the gateway of a network that is not an agent's (${platformGateway})`,
    );
    t.match(
      await statusFrom(ids[0]!, `http://${ownNetwork.Gateway}:${hostPort}/`),
      unreachable,
      `a host service on every address is out of the agent's reach at ${ownNetwork.Gateway}`,
    );
    t.equal(
      await statusFrom(peer.id, `http://${agentGatewayHost(agents[0]!)}:18789/healthz`),
      '200',
      "and the engine's DNS there still gives the peer the agent's name",
    );

    await driver.remove(ids[0]!);
    await driver.removeState(agents[0]!);
    t.equal(
      (await docker().listNetworks({ filters: { name: [`${base}-${agents[0]}`] } })).length,
      0,
      "an agent's network goes with its state",
    );
    t.same(
      Object.keys(await networksOf(peer.id)).sort(),
      [base, `${base}-${agents[1]}`].sort(),
      'and the peer left it',
    );
  },
);
