import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLaunchSlots } from '@agentyard/runtime';

const ACCEPTED_KEPT = 512;

export interface OpenClawIssue {
  path: string;
  message: string;
}

/** OpenClaw's verdict on an openclaw.json: its own validator's, or none where the package is not installed. */
export type OpenClawVerdict = { checkedBy: string; issues: OpenClawIssue[] } | { checkedBy: null; issues: [] };

export interface OpenClawValidator {
  /** Which OpenClaw answers (`openclaw@<version>`), null when none is installed here. */
  readonly checkedBy: string | null;
  validate(config: Record<string, unknown>): Promise<OpenClawVerdict>;
}

/** The validator could not give a verdict (it crashed, timed out or answered something else): the save is refused, not let through. */
export class OpenClawValidatorError extends Error {
  override name = 'OpenClawValidatorError';
}

/**
 * OpenClaw's own check of a configuration: `openclaw config validate --json` of the installed
 * package (the one the agent image is built from), run on the file the agent would be given, in a
 * directory of its own with nothing of the platform's environment. Strict like the gateway (an
 * unknown key or value is an issue), and with the plugin and channel schemas the package loads,
 * which a copy of its JSON schema would not carry. About two seconds a run on these machines:
 * saves run `concurrency` at a time.
 */
export function openClawValidator(options: {
  entry: string;
  version: string;
  timeoutMs: number;
  concurrency?: number;
}): OpenClawValidator {
  const installed = options.entry !== '' && existsSync(options.entry);
  const slot = createLaunchSlots(options.concurrency ?? 2);
  const checkedBy = installed ? `openclaw@${options.version}` : null;

  async function run(config: Record<string, unknown>): Promise<OpenClawIssue[]> {
    const home = await mkdtemp(join(tmpdir(), 'agentyard-config-check-'));
    try {
      const file = join(home, 'openclaw.json');
      await writeFile(file, JSON.stringify(config), { mode: 0o600 });
      const env = {
        HOME: home,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        OPENCLAW_CONFIG_PATH: file,
        NODE_ENV: 'production',
      };
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          [options.entry, 'config', 'validate', '--json'],
          { env, cwd: home, timeout: options.timeoutMs, maxBuffer: 4 * 1024 * 1024 },
          (error, out) => {
            // Exit 1 with a JSON verdict is an invalid config; anything without one is a failure of the validator.
            if (error && !out.trim().startsWith('{'))
              reject(new OpenClawValidatorError(`openclaw config validate failed: ${error.message.split('\n')[0]}`));
            else resolve(out);
          },
        );
      });
      const verdict = JSON.parse(stdout) as { valid?: boolean; issues?: { path?: unknown; message?: unknown }[] };
      if (verdict.valid === true) return [];
      const issues = (verdict.issues ?? []).map((issue) => ({
        path: String(issue.path ?? ''),
        message: String(issue.message ?? 'invalid'),
      }));
      if (verdict.valid !== false || issues.length === 0)
        throw new OpenClawValidatorError('openclaw config validate gave no verdict');
      return issues;
    } catch (error) {
      if (error instanceof OpenClawValidatorError) throw error;
      throw new OpenClawValidatorError(`openclaw config validate: ${(error as Error).message}`);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  // The same file gets the same verdict: files OpenClaw accepted are remembered (a restore, a save undone), the newest ACCEPTED_KEPT.
  const accepted = new Set<string>();
  return {
    checkedBy,
    async validate(config) {
      if (!checkedBy) return { checkedBy: null, issues: [] };
      const key = createHash('sha256').update(JSON.stringify(config)).digest('base64url');
      if (accepted.has(key)) return { checkedBy, issues: [] };
      const issues = await slot(() => run(config));
      if (issues.length === 0) {
        accepted.add(key);
        if (accepted.size > ACCEPTED_KEPT) accepted.delete(accepted.values().next().value!);
      }
      return { checkedBy, issues };
    },
  };
}
