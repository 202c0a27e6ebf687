import './test-file-isolation.ts';
export { identityHeaders, type IdentityOverrides } from './identity.ts';
export { systemDb, appDb, uniqueEmail, createUserRow, subscribeUser } from './database.ts';
export { startPlatform, type Platform } from './platform.ts';
export { privateDatabase, type PrivateDatabase } from './private-database.ts';
export { seedRowFor, tablesWithoutOwner } from './seeds.ts';
export { startChain, type Chain } from './chain.ts';
export { startRelay, type Relay } from './relay.ts';
export { startStripeServer, parseStripeForm, type StripeServer, type StripeRequest, type StripeForm } from './stripe-server.ts';
