import { accountRoutes } from './accounts.ts';
import { bridgeRoutes, webhookRoutes } from './bridge.ts';
import { undergroundRoutes } from './underground.ts';
import { traderRoutes } from './trader.ts';
import { aiRoutes } from './ai.ts';
import { signInRoutes } from './sign-in.ts';
import { inviteRoutes, keyRoutes } from './keys-and-invites.ts';
import { agentRoutes } from './agents.ts';
import { workspaceRoutes } from './workspace.ts';
import { schedulingRoutes } from './scheduling.ts';
import { billingRoutes } from './billing.ts';
import { spendingRoutes } from './spending.ts';
import { agentWorkRoutes } from './agent-work.ts';
import { agentWorkspaceRoutes } from './agent-workspace.ts';
import { agentSnapshotRoutes } from './agent-snapshots.ts';
import { agentWatchdogRoutes } from './agent-watchdog.ts';
import { missionControlRoutes } from './mission-control.ts';
import { colonyRoutes, swarmRoutes } from './swarms.ts';
import { installationRoutes } from './installations.ts';
import { gatewayRoutingRoutes } from './gateway-routing.ts';
import { walletRoutes } from './wallet.ts';
import { agentChannelRoutes } from './agent-channels.ts';
import type { RouteSpec } from './route.ts';

/** Every route of the interface that a service serves. Each area adds its route map here. */
export const catalog: RouteSpec[] = [
  ...Object.values(accountRoutes),
  ...Object.values(bridgeRoutes),
  ...Object.values(undergroundRoutes),
  ...Object.values(webhookRoutes),
  ...Object.values(traderRoutes),
  ...Object.values(aiRoutes),
  ...Object.values(signInRoutes),
  ...Object.values(keyRoutes),
  ...Object.values(inviteRoutes),
  ...Object.values(agentRoutes),
  ...Object.values(workspaceRoutes),
  ...Object.values(schedulingRoutes),
  ...Object.values(billingRoutes),
  ...Object.values(spendingRoutes),
  ...Object.values(agentWorkRoutes),
  ...Object.values(agentWorkspaceRoutes),
  ...Object.values(agentSnapshotRoutes),
  ...Object.values(agentWatchdogRoutes),
  ...Object.values(missionControlRoutes),
  ...Object.values(swarmRoutes),
  ...Object.values(colonyRoutes),
  ...Object.values(installationRoutes),
  ...Object.values(gatewayRoutingRoutes),
  ...Object.values(walletRoutes),
  ...Object.values(agentChannelRoutes),
];
