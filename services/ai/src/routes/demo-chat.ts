import { HttpError, type ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { withAlgorithmMode } from '../domain/algorithm-mode.ts';
import { catalogById, type CatalogEntry } from '../domain/model-catalog.ts';
import { usageBody } from '../domain/openai-format.ts';
import { demoSpendToday } from '../domain/privileged/usage-writer.ts';
import type { AiRouteOptions } from './privileged/ai.ts';

const DEMO_MAX_TOKENS = 1024;
const ENTRY_LIMIT = 4000;
const DEMO_CALLER = { userRef: 'demo', userId: null, agentId: 'demo-chat' };

/** Demo chat: no sign-in, the demo models only, never streamed, a daily spend cap on the platform's keys. */
export default async function demoChatRoutes(app: ServiceApp, { config, system, gateway, writer }: AiRouteOptions) {
  const listed = config.DEMO_MODELS.split(',')
    .map((id) => catalogById.get(id.trim()))
    .filter((m): m is CatalogEntry => m !== undefined);
  const demoModels = () => listed.filter(gateway.isUsable);

  app.route({
    ...fastifyRoute(aiRoutes.demoInfo),
    handler: async () => ({
      models: demoModels().map((m) => ({ id: m.id, name: m.name, provider: m.provider })),
      mode: 'demo' as const,
      message: demoModels().length
        ? 'Try an agent model without signing in.'
        : 'Demo unavailable — service not configured.',
    }),
  });

  app.route({
    ...fastifyRoute(aiRoutes.demoChat),
    handler: async (request) => {
      const { message, model: requested, mode, conversation = [] } = request.body;
      if (!message?.trim()) throw AiErrors.messageRequired();
      const models = demoModels();
      if (models.length === 0) throw AiErrors.demoUnavailable();
      const model = requested ? models.find((m) => m.id === requested) : models[0];
      if (!model) throw AiErrors.demoModelUnavailable();
      if ((await demoSpendToday(system)) + writer.pendingCost('demo') >= config.DEMO_DAILY_SPEND_CAP_USD)
        throw AiErrors.demoBudgetReached();

      const history = conversation
        .filter((turn) => turn.role === 'user')
        .map((turn) => ({ role: 'user', content: turn.content.slice(0, ENTRY_LIMIT) }));
      const messages = [...history, { role: 'user', content: message }];
      const chat = {
        messages: mode === 'algorithm' ? withAlgorithmMode(messages) : messages,
        max_tokens: DEMO_MAX_TOKENS,
      };
      try {
        const served = await gateway.complete(model, models, chat, DEMO_CALLER);
        return {
          id: served.completion.id || `demo-${request.id}`,
          model: served.model.id,
          message: served.completion.content,
          usage: usageBody(served.completion.usage),
          done: true as const,
        };
      } catch (error) {
        if (error instanceof HttpError && error.statusCode < 500) throw error;
        throw AiErrors.demoFailed();
      }
    },
  });
}
