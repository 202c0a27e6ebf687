// Formatting of the API's numbers, dates and codes for people; plain functions, tested under test/.
import type { Status } from './types.ts';

/** US dollars: cents from a dollar up, more digits below it so small AI costs are not shown as $0.00. */
export function usd(value: number): string {
  const abs = Math.abs(value);
  const digits = abs === 0 || abs >= 1 ? 2 : abs >= 0.01 ? 4 : 6;
  return `${value < 0 ? '-' : ''}$${abs.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** A date and time in the reader's locale; "—" when there is none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? '—'
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "3 of 5" with the share used, for counts against a plan's limit. */
export function ofLimit(used: number, limit: number): { text: string; share: number } {
  const share = limit > 0 ? Math.min(1, used / limit) : 0;
  return { text: `${count(used)} of ${count(limit)}`, share };
}

/** What each agent status means to a person, and whether it is settled (no change coming by itself). */
export const STATUS_WORDS: Record<Status, { label: string; settled: boolean; tone: 'ok' | 'busy' | 'off' | 'bad' }> = {
  pending: { label: 'Waiting to start', settled: false, tone: 'busy' },
  provisioning: { label: 'Provisioning', settled: false, tone: 'busy' },
  deploying: { label: 'Deploying', settled: false, tone: 'busy' },
  running: { label: 'Running', settled: true, tone: 'ok' },
  active: { label: 'Running', settled: true, tone: 'ok' },
  stopped: { label: 'Stopped', settled: true, tone: 'off' },
  suspended: { label: 'Suspended', settled: true, tone: 'off' },
  error: { label: 'Failed', settled: true, tone: 'bad' },
};

/** How a hibernating (suspended) agent sleeps, in words: anything that reaches it wakes it. */
export const HIBERNATION_WORDS = {
  paused: {
    label: 'Asleep (paused)',
    hint: 'Idle, so paused: it keeps its memory and uses no CPU. A chat or any other request wakes it at once.',
  },
  stopped: {
    label: 'Asleep (stopped)',
    hint: 'Idle for long, so stopped: only its disk is kept. A chat or a scheduled prompt starts it again (it boots first).',
  },
} as const;

export function statusWords(
  status: string,
  hibernation?: 'paused' | 'stopped' | null,
): { label: string; settled: boolean; tone: 'ok' | 'busy' | 'off' | 'bad'; hint?: string } {
  if (status === 'suspended' && hibernation) return { ...HIBERNATION_WORDS[hibernation], settled: true, tone: 'off' };
  return STATUS_WORDS[status as Status] ?? { label: status, settled: true, tone: 'off' };
}

/** The provisioning steps a person watches, and how far an agent in `status` has come. */
export const PROVISION_STEPS = ['Requested', 'Provisioning', 'Deploying', 'Running'] as const;
export function provisionStep(status: string): number {
  switch (status) {
    case 'pending':
      return 0;
    case 'provisioning':
      return 1;
    case 'deploying':
      return 2;
    case 'running':
    case 'active':
      return 3;
    default:
      return -1;
  }
}

/** `/login?error=` codes from the sign-in redirects (OAuth, links), in words. */
const LOGIN_ERRORS: Record<string, string> = {
  AccessDenied: 'You cancelled signing in with the provider.',
  AccountDisabled: 'Signing in with this provider is turned off for your account.',
  EmailNotVerified: 'The provider has not verified your email address, so it cannot sign you in here.',
  InviteRequired: 'Registration needs an invite on this server: open the invite link you were sent, then sign in.',
  InviteNotFound: 'That invite does not exist or has expired.',
  InviteUsed: 'That invite has already been used.',
  GoogleNotConfigured: 'Google sign-in is not set up on this server.',
  GoogleAuthError: 'Google sign-in could not start. Try again in a moment.',
  GoogleAuthFailed: 'Google did not complete the sign-in. Try again, or use your email and password.',
  GitHubNotConfigured: 'GitHub sign-in is not set up on this server.',
  GitHubAuthFailed: 'GitHub did not complete the sign-in. Try again, or use your email and password.',
};

export function loginErrorWords(code: string | null): string | undefined {
  if (!code) return undefined;
  return LOGIN_ERRORS[code] ?? `Signing in failed (${code.slice(0, 100)}). Try again.`;
}

/** A short date label (e.g. "Nov 25") for chart axes from `YYYY-MM-DD`. */
export function dayLabel(date: string): string {
  const parsed = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(parsed.getTime())
    ? date
    : parsed.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}
