// The test SMTP server lives in @agentyard/testing (the platform's journey test reads mail too).
export {
  startMailServer,
  unfold,
  tokenIn,
  verificationTokenIn,
  isResetMail,
  isVerificationMail,
  type DeliveredMail as Delivered,
} from '@agentyard/testing';
