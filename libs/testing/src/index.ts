import './test-file-isolation.ts';
export { identityHeaders, type IdentityOverrides } from './identity.ts';
export { systemDb, appDb, uniqueEmail, createUserRow } from './database.ts';
export { startPlatform, startWholePlatform, type Platform, type PlatformOptions, PlatformLogs } from './platform.ts';
export { privateDatabase, type PrivateDatabase } from './private-database.ts';
export { seedRowFor, tablesWithoutOwner } from './seeds.ts';
export { startChain, type Chain } from './chain.ts';
export { startRelay, type Relay } from './relay.ts';
export { startLocalProviders, type Behaviour, type Delivered, type LocalProviders } from './local-providers.ts';
