import type { FastifyReply } from 'fastify';
import { AuthErrors } from '../errors.ts';
import type { SignInThrottle } from '../domain/sign-in-throttle.ts';

/**
 * Before a password is checked (sign-in, or the current password of a change): 429
 * SIGN_IN_THROTTLED with Retry-After while the account waits on this client's network, so a flood
 * costs a Redis call each, not argon2. The attempt counts as a failure until `throttle.succeeded`.
 */
export async function admitPasswordCheck(
  throttle: SignInThrottle,
  email: string,
  ip: string,
  reply: FastifyReply,
): Promise<void> {
  const waitSeconds = await throttle.admit(email, ip);
  if (waitSeconds === null) return;
  reply.header('retry-after', String(waitSeconds));
  throw AuthErrors.signInThrottled(waitSeconds);
}
