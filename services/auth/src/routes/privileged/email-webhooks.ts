import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { SystemDb } from '@agentyard/db/system';
import { parseJsonText, type ServiceApp } from '@agentyard/http';
import type { AuthConfig } from '../../config.ts';
import { recordEmailEvent, verifySvixSignature } from '../../domain/privileged/email-webhooks.ts';
import { SignInErrors } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as sent, for signature checks (set on routes that need it). */
    rawBody?: string;
  }
}

const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

export default async function emailWebhookRoutes(
  app: ServiceApp,
  { config, systemDb }: { config: AuthConfig; systemDb: SystemDb },
) {
  // The signature covers the exact bytes sent, so this context keeps them next to the parsed body.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    try {
      const parsed = parseJsonText(text);
      request.rawBody = text;
      done(null, parsed);
    } catch (error) {
      done(error as Error);
    }
  });

  app.route({
    ...fastifyRoute(signInRoutes.emailWebhook),
    handler: async (request) => {
      if (!config.EMAIL_WEBHOOK_SECRET) throw SignInErrors.emailWebhookNotConfigured();
      const id = verifySvixSignature(
        config.EMAIL_WEBHOOK_SECRET,
        {
          id: header(request.headers['svix-id']),
          timestamp: header(request.headers['svix-timestamp']),
          signature: header(request.headers['svix-signature']),
        },
        request.rawBody ?? '',
      );
      const { duplicate } = await recordEmailEvent(systemDb, id, {
        type: request.body.type,
        data: request.body.data as Record<string, unknown>,
      });
      return { received: true as const, duplicate };
    },
  });
}
