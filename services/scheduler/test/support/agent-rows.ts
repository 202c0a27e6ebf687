import { randomBytes, randomUUID } from 'node:crypto';
import { parseKeyring } from '@agentyard/crypto';
import { sealAgentSecret } from '@agentyard/agent-gateway';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';

/** A user with one agent whose gateway (hooks) is at `gatewayUrl`, its hooks token (and gateway token, when given) sealed as provisioning does; `headers` sign in as the user. */
export async function userWithAgent(
  gatewayUrl: string | null,
  hooksToken = randomBytes(24).toString('base64url'),
  gatewayToken?: string,
) {
  const user = await createUserRow();
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'scheduled',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `s-${randomUUID().slice(0, 12)}`,
      status: 'running',
      gateway_url: gatewayUrl,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const keyring = parseKeyring(process.env.ENCRYPTION_KEYS!);
  const sealed = sealAgentSecret(keyring, agent.id, 'hooks-token', hooksToken);
  const gatewaySealed =
    gatewayToken === undefined ? null : sealAgentSecret(keyring, agent.id, 'gateway-token', gatewayToken);
  await systemDb()
    .updateTable('agents')
    .set({ hooks_token_sealed: sealed, gateway_token_sealed: gatewaySealed })
    .where('id', '=', agent.id)
    .execute();
  // Signed anew on each use: a signed identity lives 30 s, less than a slow test file.
  return {
    userId: user.id,
    agentId: agent.id,
    hooksToken,
    get headers() {
      return identityHeaders({ userId: user.id, email: user.email });
    },
  };
}
