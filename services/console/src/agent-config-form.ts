/** The per-agent configuration page's form: the common fields read from a configuration, and the change they send. */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const DM_POLICIES = ['pairing', 'allowlist', 'open', 'disabled'] as const;

export interface CommonFields {
  model: string;
  logLevel: string;
  telegram: boolean;
  discord: boolean;
  /** As typed: triggers separated by spaces or commas. */
  resetTriggers: string;
  dmPolicy: string;
}

const at = (config: Record<string, unknown>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (node, key) =>
        node && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined,
      config,
    );

/** The form's fields as the configuration has them (OpenClaw's defaults where it says nothing). */
export function commonFieldsOf(config: Record<string, unknown>, model: string): CommonFields {
  const triggers = at(config, 'session.resetTriggers');
  return {
    model,
    logLevel: String(at(config, 'logging.level') ?? 'info'),
    telegram: at(config, 'channels.telegram.enabled') === true,
    discord: at(config, 'channels.discord.enabled') === true,
    resetTriggers: Array.isArray(triggers) ? triggers.join(' ') : '',
    dmPolicy: String(at(config, 'channels.telegram.dmPolicy') ?? 'pairing'),
  };
}

/** The body of `PUT /api/agents/:id/config` for the form's fields. */
export function changeOf(fields: CommonFields) {
  return {
    model: fields.model.trim(),
    logLevel: fields.logLevel,
    channels: { telegram: fields.telegram, discord: fields.discord },
    resetTriggers: fields.resetTriggers.split(/[\s,]+/).filter(Boolean),
    dmPolicy: fields.dmPolicy,
  };
}

/** How a save reached the agent, in words. */
export const APPLIED_WORDS: Record<'hot-reload' | 'restart' | 'next-start', string> = {
  'hot-reload': 'Saved and applied by hot reload: the gateway took it without restarting.',
  restart: 'Saved; the agent restarts with it (its status shows the restart).',
  'next-start': 'Saved; the agent is not running, so it takes it at its next start.',
};
