import t from 'tap';
import { containerEventOf } from '../../src/container-events.ts';

// The engine's events as the watchdog reads them: Podman 4.3's shapes (seen on these machines) and
// Docker's. The agent comes from the container's name, as for the rest of the driver.
const agentIdOf = (name: string | undefined) =>
  name?.startsWith('agentyard-agent-') ? name.slice('agentyard-agent-'.length, name.lastIndexOf('-')) : '';
const podman = (Action: string, attributes: Record<string, string> = {}) => ({
  Type: 'container',
  Action,
  status: Action,
  id: 'c1',
  time: 1795776694,
  Actor: { ID: 'c1', Attributes: { name: 'agentyard-agent-a1-xyz', containerExitCode: '0', ...attributes } },
});

t.test('die, oom and health are followed; everything else is not', async (t) => {
  const died = podman('die', { exitCode: '137', containerExitCode: '137' });
  // As the engine writes it: the nanoseconds as a JSON number longer than a double holds.
  const line = JSON.stringify(died).replace('"time":1795776694', '"time":1795776694,"timeNano":1795776694350140038');
  t.same(containerEventOf(JSON.parse(line), agentIdOf, line), {
    containerId: 'c1',
    agentId: 'a1',
    kind: 'die',
    time: '1795776694350140038',
    exitCode: 137,
  });
  t.has(containerEventOf(podman('oom'), agentIdOf), { kind: 'oom', exitCode: null });
  t.has(
    containerEventOf(podman('health_status: unhealthy'), agentIdOf),
    { kind: 'health', health: 'unhealthy', time: '1795776694000000000' },
    "Docker's form (no timeNano: whole seconds)",
  );
  t.has(
    containerEventOf(podman('health_status', { health_status: 'healthy' }), agentIdOf),
    { kind: 'health', health: 'healthy' },
    "Podman's form",
  );
  for (const action of ['create', 'start', 'kill', 'cleanup', 'remove', 'exec_create: sh'])
    t.equal(containerEventOf(podman(action), agentIdOf), null, `${action} is not followed`);
  t.equal(containerEventOf({ ...podman('die'), Type: 'image' }, agentIdOf), null, 'only containers');
  t.equal(
    containerEventOf({ Type: 'container', Action: 'die' }, agentIdOf),
    null,
    'no container id: nothing to act on',
  );
  t.match(
    containerEventOf(podman('die', { name: 'agentyard-warm-3', exitCode: 'x' }), agentIdOf),
    { agentId: '', exitCode: null },
    "a warm container is no agent's; a code that is no number is none",
  );
});
