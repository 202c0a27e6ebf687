// The local provider servers live in @agentyard/testing (the end-to-end tests use them too).
export { startLocalProviders, type Behaviour, type Delivered, type LocalProviders } from '@agentyard/testing';
