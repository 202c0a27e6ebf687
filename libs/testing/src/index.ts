import './test-file-isolation.ts';
export { identityHeaders, type IdentityOverrides } from './identity.ts';
export { systemDb, appDb, uniqueEmail, createUserRow, subscribeUser } from './database.ts';
export { startPlatform, startWholePlatform, type Platform, type PlatformOptions, PlatformLogs } from './platform.ts';
export { privateDatabase, type PrivateDatabase, useOwnDatabase } from './private-database.ts';
export { seedRowFor, tablesWithoutOwner } from './seeds.ts';
export { startChain, type Chain } from './chain.ts';
export { startRelay, type Relay } from './relay.ts';
export { consoleErrors } from './console-errors.ts';
export { walkPages, malformedCursors, type Page } from './list-pages.ts';
export { againstAnOpenTransaction, warmAppPool } from './caps.ts';
export {
  startLocalProviders,
  type Behaviour,
  type Delivered,
  type LocalProviders,
  type ToolCall,
} from './local-providers.ts';
export { startTelegramServer, type BotApiCall, type TelegramServer, type TelegramUser } from './telegram-server.ts';
export {
  startStripeServer,
  parseStripeForm,
  type StripeServer,
  type StripeRequest,
  type StripeForm,
} from './stripe-server.ts';
export {
  startMailServer,
  unfold,
  tokenIn,
  verificationTokenIn,
  isResetMail,
  isVerificationMail,
  type DeliveredMail,
} from './mail-server.ts';
export { sendRaw, startTrapListener, type RawAnswer } from './raw-http.ts';
export { startPageServer, ARTICLE_HTML, type PageServer } from './page-server.ts';
export { startPrivatePostgres, migratedDatabase, freePort, type PrivatePostgres } from './private-postgres.ts';
export { startPrivateRedis, type PrivateRedis } from './private-redis.ts';
export { noPrivateEngine, startPrivateEngine, type PrivateEngine } from './private-engine.ts';
export { startHooksStandIn, type HooksStandIn, type HookDelivery } from './hooks-stand-in.ts';
export { seedMinuteTasks, type MinuteTasksOptions } from './scheduled-prompts.ts';
export { startS3Server, type S3Server, type S3Request, type S3Operation } from './s3-server.ts';
export type { S3Credentials } from './s3-request-signature.ts';
