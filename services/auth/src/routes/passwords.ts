import { fastifyRoute, signInRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import type { AuthConfig } from '../config.ts';
import { checkNotABot } from '../domain/bot-check.ts';
import type { PasswordResetMailJob } from '../domain/privileged/outbound-email.ts';
import { PASSWORD_RESET_MAIL_JOB } from '../domain/job-names.ts';
import { fileResetRequest, resetPassword } from '../domain/password-reset.ts';
import type { SignInThrottle } from '../domain/sign-in-throttle.ts';
import type { Revocations } from '../domain/revocations.ts';

export const FORGOT_PASSWORD_ANSWER = 'If an account exists for that email, a password reset link is on its way.';

export default async function passwordRoutes(
  app: ServiceApp,
  {
    config,
    queues,
    throttle,
    revocations,
  }: { config: AuthConfig; queues: QueueSet; throttle: SignInThrottle; revocations: Revocations },
) {
  const botCheck = {
    verifyUrl: config.CAPTCHA_VERIFY_URL,
    secret: config.CAPTCHA_SECRET,
    timeoutMs: config.CAPTCHA_TIMEOUT_MS,
  };

  app.route({
    ...fastifyRoute(signInRoutes.forgotPassword),
    handler: async (request) => {
      await checkNotABot({ ...request.body, ip: request.ip }, botCheck);
      await queues.available();
      const requestId = await fileResetRequest(app.db, request.body.email);
      await queues.add(
        QUEUES.email,
        PASSWORD_RESET_MAIL_JOB,
        { kind: 'password-reset', requestId } satisfies PasswordResetMailJob,
        { jobId: `reset-${requestId}` },
      );
      return { success: true as const, message: FORGOT_PASSWORD_ANSWER };
    },
  });

  app.route({
    ...fastifyRoute(signInRoutes.resetPassword),
    handler: async (request) => {
      const { userId, email } = await resetPassword(app.db, request.body.token, request.body.password);
      await revocations.announce(userId);
      // The mailbox is proven: whatever failures locked the account out of password sign-in end here.
      await throttle.reset(email);
      return { success: true as const };
    },
  });
}
