import { HttpError } from '@agentyard/http';

/** Every error the auth service answers with, named once. */
export const AuthErrors = {
  invalidEmail: () => new HttpError(400, 'Invalid email address'),
  shortPassword: () => new HttpError(400, 'Password must be at least 8 characters'),
  invalidReferralCode: () => new HttpError(400, 'Invalid referral code: letters, digits and hyphens, at most 20'),
  botDetected: () => new HttpError(403, 'Request blocked by bot detection', 'BOT_DETECTED'),
  userExists: () => new HttpError(409, 'User already exists'),
  invalidCredentials: () => new HttpError(401, 'Invalid email or password'),
  loginFailed: () => new HttpError(500, 'Login failed'),
  wrongCurrentPassword: () => new HttpError(400, 'Current password is incorrect'),
  blankName: () => new HttpError(400, 'name must not be blank'),
  userNotFound: () => new HttpError(404, 'User not found'),
  reservedEmailDomain: () => new HttpError(400, 'Addresses @wallet.agentyard are reserved for wallet sign-in'),
  signInThrottled: (retryAfterSeconds: number) =>
    new HttpError(
      429,
      `Too many failed sign-ins for this account: try again in ${retryAfterSeconds} s`,
      'SIGN_IN_THROTTLED',
    ),
  invalidVerificationToken: () => new HttpError(400, 'Invalid verification token'),
  spentVerificationToken: () =>
    new HttpError(410, 'This verification link has expired, was used, or a newer one was sent: ask for a new one'),
  emailAlreadyVerified: () => new HttpError(409, 'Email already verified'),
  walletAccountHasNoMailbox: () => new HttpError(400, 'Wallet accounts have no email address to verify'),
};

/** Errors of external sign-in, keys and invites. */
export const SignInErrors = {
  externalSignInDisabled: () =>
    new HttpError(403, 'External sign-in is disabled for this account', 'EXTERNAL_SIGNIN_DISABLED'),
  unverifiedAccountEmail: () =>
    new HttpError(
      409,
      'An account with this email exists but its address is not verified: sign in with its password and verify it, or reset its password',
      'EMAIL_NOT_VERIFIED',
    ),
  walletEmailTaken: () =>
    new HttpError(
      409,
      "This wallet's address belongs to an account that never signed in with this wallet",
      'WALLET_EMAIL_TAKEN',
    ),
  invalidSecurityEvent: () => new HttpError(400, 'Invalid security event token'),
  securityEventsNotConfigured: () => new HttpError(503, 'Security events are not configured'),
  securityEventsUnavailable: () => new HttpError(503, 'Security event keys unavailable'),
  invalidNonce: () => new HttpError(401, 'Invalid or expired nonce'),
  invalidSignInMessage: (why: string) => new HttpError(400, `Invalid sign-in message: ${why}`),
  invalidWalletSignature: () => new HttpError(401, 'Invalid wallet signature'),
  addressRequired: () => new HttpError(400, 'address is required for the token-gating check'),
  addressNotBound: () =>
    new HttpError(
      403,
      'This address is not the custody or a verified address of this farcaster account',
      'ADDRESS_NOT_BOUND',
    ),
  farcasterHubUnavailable: () => new HttpError(502, 'Farcaster hub unavailable'),
  chainUnavailable: () => new HttpError(502, 'Chain unavailable'),
  tokenGateNotConfigured: () => new HttpError(503, 'Token gating is not configured'),
  insufficientBalance: (balance: bigint, minimum: bigint) =>
    new HttpError(403, 'Insufficient token balance', 'TOKEN_GATE', {
      balance: balance.toString(),
      minimum: minimum.toString(),
    }),
  invalidIdentityToken: () => new HttpError(401, 'Invalid identity token'),
  invalidFarcasterSession: () => new HttpError(401, 'Invalid session token: sign in again', 'REFRESH_REQUIRED'),
  farcasterSessionExpired: () =>
    new HttpError(401, 'Session token too old to refresh: sign in again', 'REFRESH_REQUIRED'),
  invalidResetToken: () => new HttpError(400, 'Invalid or expired reset token'),
  emailWebhookNotConfigured: () => new HttpError(503, 'Email webhook is not configured'),
  invalidWebhookSignature: () => new HttpError(401, 'Invalid webhook signature'),
  apiKeyNotFound: () => new HttpError(404, 'API key not found'),
  apiKeyLimit: (limit: number) =>
    new HttpError(429, `API key limit reached: at most ${limit} per user; delete one first`, 'API_KEY_LIMIT', {
      limit,
    }),
  inviteLimit: (limit: number) =>
    new HttpError(
      429,
      `Invite limit reached: at most ${limit} unused invites at a time; wait until one is used or expires`,
      'INVITE_LIMIT',
      { limit },
    ),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  invalidInviteName: () => new HttpError(400, 'Invalid name'),
  invalidInviteToken: () => new HttpError(400, 'Invalid invite token format'),
  inviteNotFound: () => new HttpError(404, 'Invite not found or expired'),
  inviteUsed: () => new HttpError(410, 'Invite already used'),
  inviteRequired: () => new HttpError(403, 'An invite is required to register: pass inviteToken', 'INVITE_REQUIRED'),
  invalidInviteEmail: () => new HttpError(400, 'Invalid email address'),
  deprecatedInviteRoute: (replacement: string) =>
    new HttpError(410, `This route is deprecated (12-character codes); use ${replacement}`, 'DEPRECATED'),
};
