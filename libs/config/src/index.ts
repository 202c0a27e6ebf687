export {
  loadConfig,
  ConfigError,
  adminEmailSet,
  adminNeedsVerifiedEmail,
  isLoopbackHost,
  plainSetting,
  refuseExposedListeners,
  type BaseConfig,
} from './load.ts';
export { Secret, baseConfigSchema } from './base.ts';
export { SERVICE_NAMES, SERVICE_PORTS, serviceListenAddress, serviceUrl } from './services.ts';
export { ensureDevSecrets, DEV_SECRETS_FILE, productionSecrets } from './dev-secrets.ts';
export { repoRoot } from './paths.ts';
