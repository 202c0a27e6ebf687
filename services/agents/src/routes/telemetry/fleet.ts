import { colonyRoutes, fastifyRoute, missionControlRoutes as spec } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { colonyDiagnostics, colonyTree } from '../../domain/telemetry/colony.ts';
import { fleetGraph, fleetTraces, TraceCursorError } from '../../domain/telemetry/fleet.ts';
import { FleetErrors } from '../../errors.ts';

/** Mission control's graph and traces, and the colony's lineage and health: the caller's own agents, read through row-level security. */
export default async function fleetRoutes(app: ServiceApp) {
  app.route({
    ...fastifyRoute(spec.fleetGraph),
    handler: async (request) => request.asUser((trx) => fleetGraph(trx, request.query.windowHours ?? 24)),
  });

  app.route({
    ...fastifyRoute(spec.fleetTraces),
    handler: async (request) => {
      const { agentId, kind, limit = 50, cursor } = request.query;
      try {
        return await request.asUser((trx) => fleetTraces(trx, { agentId, kind, limit, cursor }));
      } catch (error) {
        throw error instanceof TraceCursorError ? FleetErrors.invalidCursor() : error;
      }
    },
  });

  app.route({
    ...fastifyRoute(colonyRoutes.colonyStatus),
    handler: async (request) => {
      const { action } = request.query;
      if (action === 'soul') throw FleetErrors.soulNotSupported();
      return action === 'tree' ? request.asUser(colonyTree) : request.asUser(colonyDiagnostics);
    },
  });
}
