import { Type } from 'typebox';
import { Errors, Nullable, Ok, Success, Uuid } from './common.ts';
import { route } from './route.ts';

const Email = Type.String({ minLength: 1, maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 1024 });

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    referralCode: Type.Optional(Type.String({ maxLength: 64 })),
    /** Honeypot: a hidden form field people leave empty. */
    website: Type.Optional(Type.String({ maxLength: 2048 })),
    captchaToken: Type.Optional(Type.String({ maxLength: 4096 })),
    inviteToken: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'an invite (64 hex characters), used up by this registration; required when the server requires invites',
      }),
    ),
  },
  { additionalProperties: false },
);

const EmailVerified = Type.Boolean({
  description:
    'whether the person proved the address (verification link, or an OAuth provider that vouched for it); wallet accounts never have',
});

export const RegisteredUser = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Type.String(),
  emailVerified: EmailVerified,
});

export const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
export const LoginResponse = Type.Object({
  ok: Type.Literal(true),
  user: Type.Object({ id: Uuid, name: Type.String(), emailVerified: EmailVerified }),
});

export const SessionUser = Type.Object({
  id: Uuid,
  name: Type.String(),
  email: Type.String(),
  isAdmin: Type.Boolean(),
  emailVerified: EmailVerified,
});
export const SessionResponse = Type.Object({ user: Nullable(SessionUser) });

export const Profile = Type.Object({
  id: Uuid,
  name: Type.String(),
  email: Type.String(),
  isAdmin: Type.Boolean(),
  emailVerified: EmailVerified,
  plan: Type.String(),
  createdAt: Type.String(),
});
export const ProfileUpdate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);
export const PasswordChange = Type.Object(
  {
    currentPassword: Password,
    newPassword: Password,
  },
  { additionalProperties: false },
);

export const VerifyEmailBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'the token of the link mailed to the address (`/verify-email?token=...`)',
    }),
  },
  { additionalProperties: false },
);
export const VerificationSent = Type.Object({ success: Type.Literal(true), message: Type.String() });

export const accountRoutes = {
  register: route({
    method: 'POST',
    url: '/api/register',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-register',
    summary: 'Create an account (no session is created)',
    schema: { body: RegisterBody, response: { 201: RegisteredUser, ...Errors } },
  }),
  login: route({
    method: 'POST',
    url: '/api/auth/login',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-login',
    summary: 'Sign in with email and password; sets the session cookie',
    schema: { body: LoginBody, response: { 200: LoginResponse, ...Errors } },
  }),
  session: route({
    method: 'GET',
    url: '/api/auth/session',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'The signed-in user, or null; always 200',
    schema: { response: { 200: SessionResponse, ...Errors } },
  }),
  signout: route({
    method: 'POST',
    url: '/api/auth/signout',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary: 'End the current session and clear the cookie; always 200',
    schema: { response: { 200: Ok, ...Errors } },
  }),
  settings: route({
    method: 'GET',
    url: '/api/settings',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary: 'The current user profile',
    schema: { response: { 200: Profile, ...Errors } },
  }),
  updateSettings: route({
    method: ['POST', 'PATCH'],
    url: '/api/settings',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Update the profile',
    schema: { body: ProfileUpdate, response: { 200: Profile, ...Errors } },
  }),
  verifyEmail: route({
    method: 'POST',
    url: '/api/auth/verify-email',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    summary:
      'Verify an address with the token of its link (single use, expires); 400 unknown token, 410 used, superseded or expired',
    schema: { body: VerifyEmailBody, response: { 200: Success, ...Errors } },
  }),
  resendVerification: route({
    method: 'POST',
    url: '/api/auth/resend-verification',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-resend-verification',
    summary: "Mail a fresh verification link to the signed-in user's address; earlier links stop working",
    schema: { response: { 200: VerificationSent, ...Errors } },
  }),
  changePassword: route({
    method: 'POST',
    url: '/api/settings/password',
    service: 'auth',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: ['web-password-change-ip', 'web-password-change'],
    summary: "Change the password (current one required); ends the user's other sessions",
    schema: { body: PasswordChange, response: { 200: Success, ...Errors } },
  }),
};
