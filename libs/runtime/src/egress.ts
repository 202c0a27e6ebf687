import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const TABLE = ['inet', 'agentyard_egress'];

/**
 * Lets agent containers reach one more of the edge's agent listeners through the host's egress rules
 * (infra/container-engine/up.sh installs them and allows `npm start`'s listener); a test platform
 * opens one of its own on a port of its own. The entry lapses after `ttlSeconds` should its owner die;
 * the answer withdraws it. Where no rules are installed (a Docker host) agents are not confined by
 * them and there is nothing to allow.
 */
export async function allowAgentListener(host: string, port: number, ttlSeconds = 3600): Promise<() => Promise<void>> {
  const installed = await run('nft', ['list', 'table', ...TABLE], { timeout: 5000 }).then(
    () => true,
    () => false,
  );
  if (!installed) return async () => {};
  const element = `${host} . ${port}`;
  await run('nft', ['add', 'element', ...TABLE, 'listeners', `{ ${element} timeout ${ttlSeconds}s }`], { timeout: 5000 });
  return async () => {
    await run('nft', ['delete', 'element', ...TABLE, 'listeners', `{ ${element} }`], { timeout: 5000 }).catch(() => undefined);
  };
}
