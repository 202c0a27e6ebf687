import type { Keyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, installationRoutes as spec } from '@agentyard/proto-schemas';
import { installScript, linkScript } from '../../domain/settings/install-scripts.ts';
import {
  deleteInstallation,
  installationView,
  listInstallations,
  recordHeartbeat,
  registerInstallation,
} from '../../domain/settings/installations.ts';

export interface InstallationRouteOptions {
  keyring: Keyring;
  publicBaseUrl: string;
  offlineAfterMs: number;
}

/**
 * Installations (issue 32): an OpenClaw the user runs themselves, linked with their `sk_` key. The
 * user is always the caller the edge resolved from the key (or session), never one the body names.
 */
export default async function installationRouteGroup(
  app: ServiceApp,
  { keyring, publicBaseUrl, offlineAfterMs }: InstallationRouteOptions,
) {
  const base = publicBaseUrl.replace(/\/+$/, '');
  const dashboardUrl = `${base}/installations`;

  for (const [routeSpec, kind] of [
    [spec.registerHome, 'home'],
    [spec.registerLink, 'link'],
  ] as const) {
    app.route({
      ...fastifyRoute(routeSpec),
      handler: async (request, reply) => {
        const userId = request.identity.userId!;
        const installationId = await request.asUser((trx) =>
          registerInstallation(trx, userId, keyring, { kind, ...request.body }),
        );
        return reply.code(201).send({ installationId, dashboardUrl });
      },
    });
  }

  app.route({
    ...fastifyRoute(spec.installationHeartbeat),
    handler: async (request) => {
      const row = await request.asUser((trx) => recordHeartbeat(trx, request.params.id, request.body.version));
      return { installation: installationView(row, offlineAfterMs) };
    },
  });

  app.route({
    ...fastifyRoute(spec.listInstallations),
    handler: async (request) => ({
      installations: (await request.asUser(listInstallations)).map((row) => installationView(row, offlineAfterMs)),
    }),
  });

  app.route({
    ...fastifyRoute(spec.deleteInstallation),
    handler: async (request) => {
      await request.asUser((trx) => deleteInstallation(trx, request.params.id));
      return { deleted: true as const, id: request.params.id };
    },
  });

  const scripts = { install: installScript(base), link: linkScript(base) };
  app.route({
    ...fastifyRoute(spec.installScript),
    handler: async (_request, reply) => reply.type('text/x-shellscript; charset=utf-8').send(scripts.install),
  });
  app.route({
    ...fastifyRoute(spec.linkScript),
    handler: async (_request, reply) => reply.type('text/x-shellscript; charset=utf-8').send(scripts.link),
  });
}
