import { fetchWithTimeout } from '@agentyard/http';
import { AuthErrors } from '../errors.ts';

export interface BotCheckSettings {
  verifyUrl?: string | undefined;
  secret?: string | undefined;
  timeoutMs: number;
}

/**
 * Bot detection for sign-up forms: a honeypot field people leave empty, then, when configured, a
 * captcha token checked with the provider's siteverify protocol. A verifier that cannot be
 * reached refuses the sign-up rather than letting bots through.
 */
export async function checkNotABot(
  input: { website?: string | undefined; captchaToken?: string | undefined; ip: string },
  settings: BotCheckSettings,
): Promise<void> {
  if (input.website) throw AuthErrors.botDetected();
  if (!settings.verifyUrl) return;
  if (!input.captchaToken) throw AuthErrors.botDetected();
  const form = new URLSearchParams({ secret: settings.secret ?? '', response: input.captchaToken, remoteip: input.ip });
  try {
    const response = await fetchWithTimeout(settings.verifyUrl, {
      method: 'POST',
      body: form,
      timeoutMs: settings.timeoutMs,
    });
    const verdict = (await response.json()) as { success?: unknown };
    if (response.ok && verdict.success === true) return;
  } catch {
    // fall through: unverifiable counts as a bot
  }
  throw AuthErrors.botDetected();
}
