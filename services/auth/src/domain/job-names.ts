// Job names of the auth service's queues, shared by the routes that queue them and the workers.
export const SECURITY_EVENT_JOB = 'apply';
export const PASSWORD_RESET_MAIL_JOB = 'password-reset';
export const EMAIL_VERIFICATION_MAIL_JOB = 'email-verification';
