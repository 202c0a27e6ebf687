import { Readable } from 'node:stream';
import type { AgentControlClient, SkillStatus } from '@agentyard/agent-gateway';
import type { AgentWorkspace, WorkspaceLimits } from '@agentyard/runtime';
import { onWorkspace } from './workspace-files.ts';
import { AgentErrors, SkillErrors } from '../../errors.ts';
import { onAgentControlPlane, type AgentGateway } from '../gateway/agent-gateway-access.ts';

/**
 * An agent's skills as its gateway reports them (`skills.status`, `config.get`), never a table of
 * ours: a custom skill is a `<workspace>/skills/<name>/SKILL.md` (the folder OpenClaw gives
 * precedence), written through the platform's confined access to the workspace; a bundled skill is
 * one of those that ship with the agent's OpenClaw, installed when the gateway's configuration
 * switches it on (`skills.entries.<name>.enabled`, set with `skills.update`, applied without a restart).
 */
const AGENT = 'main';

export interface InstalledSkill {
  name: string;
  enabled: boolean;
  source: string;
  description: string;
}
export interface SkillsOfAgent {
  installed: InstalledSkill[];
  available: { name: string; description: string }[];
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The gateway's view: custom skills in the workspace, bundled ones its configuration switches on, and the bundled ones left. */
async function skillsOf(
  client: AgentControlClient,
  timeoutMs: number,
): Promise<SkillsOfAgent & { custom: Set<string> }> {
  const status = await client.call('skills.status', { agentId: AGENT }, timeoutMs);
  const snapshot = await client.call('config.get', {}, timeoutMs);
  const entries = record(record(record(snapshot.config).skills).entries);
  const customDir = `${status.workspaceDir.replace(/\/+$/, '')}/skills/`;
  const isCustom = (s: SkillStatus) => typeof s.filePath === 'string' && s.filePath.startsWith(customDir);
  const switchedOn = (s: SkillStatus) => record(entries[s.skillKey ?? s.name]).enabled === true;
  const skills = Array.isArray(status.skills) ? status.skills : [];
  const installed = skills
    .filter((s) => isCustom(s) || (s.bundled === true && switchedOn(s)))
    .map((s) => ({
      name: s.name,
      enabled: s.disabled !== true,
      source: s.source ?? 'unknown',
      description: s.description ?? '',
    }));
  const taken = new Set(installed.map((s) => s.name));
  const available = skills
    .filter((s) => s.bundled === true && !taken.has(s.name))
    .map((s) => ({ name: s.name, description: s.description ?? '' }));
  return { installed, available, custom: new Set(skills.filter(isCustom).map((s) => s.name)) };
}

export async function listSkills(gateway: AgentGateway, timeoutMs: number): Promise<SkillsOfAgent> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    const { installed, available } = await skillsOf(client, timeoutMs);
    return { installed, available };
  });
}

/** A SKILL.md that OpenClaw loads under this name: a frontmatter block naming it and describing it. */
function checkSkillMd(name: string, skillMd: string): void {
  const frontmatter = /^---\r?\n([\s\S]*?)\r?\n---(\r?\n|$)/.exec(skillMd)?.[1];
  const field = (key: string) =>
    frontmatter && new RegExp(`^${key}:\\s*["']?([^"'\\r\\n]*)["']?\\s*$`, 'm').exec(frontmatter)?.[1]?.trim();
  if (skillMd.includes('\0') || field('name') !== name || !field('description')) throw SkillErrors.badSkillMd(name);
}

export interface SkillInstall {
  name: string;
  skillMd?: string;
}

/**
 * Installs a skill and switches it on, unless that makes more installed skills than `limit`
 * (429 SKILL_LIMIT, the plan's rule for configurations). Installing one already there replaces it.
 */
export async function installSkill(
  gateway: AgentGateway,
  workspace: () => AgentWorkspace,
  install: SkillInstall,
  limits: { skills: number; workspace: WorkspaceLimits },
  timeoutMs: number,
): Promise<SkillsOfAgent> {
  if (install.skillMd !== undefined) checkSkillMd(install.name, install.skillMd);
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    const before = await skillsOf(client, timeoutMs);
    if (
      install.skillMd === undefined &&
      !before.available.some((s) => s.name === install.name) &&
      !before.installed.some((s) => s.name === install.name)
    ) {
      throw SkillErrors.notBundled(install.name);
    }
    const adds = !before.installed.some((s) => s.name === install.name);
    if (adds && before.installed.length + 1 > limits.skills) throw AgentErrors.skillLimit(limits.skills);
    if (install.skillMd !== undefined) {
      await onWorkspace(() =>
        workspace().write(
          `skills/${install.name}/SKILL.md`,
          Readable.from([Buffer.from(install.skillMd as string)]),
          limits.workspace,
        ),
      );
    }
    await client.call('skills.update', { skillKey: install.name, enabled: true }, timeoutMs);
    // The gateway picks a new SKILL.md up from its folder watcher a moment later: read until it has, within the deadline.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { installed, available } = await skillsOf(client, timeoutMs);
      if (installed.some((s) => s.name === install.name && s.enabled) || Date.now() > deadline)
        return { installed, available };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
}

/** Removes a custom skill's files, or switches a bundled one off (either way the gateway stops offering it). */
export async function removeSkill(
  gateway: AgentGateway,
  workspace: () => AgentWorkspace,
  name: string,
  timeoutMs: number,
): Promise<void> {
  await onAgentControlPlane(gateway, timeoutMs, async (client) => {
    const { installed, custom } = await skillsOf(client, timeoutMs);
    if (!installed.some((s) => s.name === name)) throw SkillErrors.notInstalled(name);
    if (custom.has(name)) {
      await onWorkspace(async () => {
        await workspace().remove(`skills/${name}/SKILL.md`);
        await workspace().remove(`skills/${name}`);
      });
    }
    // Off in the gateway's configuration too: a bundled skill of the same name must not come back installed.
    await client.call('skills.update', { skillKey: name, enabled: false }, timeoutMs);
    // As for an install: the gateway's folder watcher notices a removed SKILL.md a moment later.
    const deadline = Date.now() + timeoutMs;
    while ((await skillsOf(client, timeoutMs)).installed.some((s) => s.name === name) && Date.now() <= deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
}
