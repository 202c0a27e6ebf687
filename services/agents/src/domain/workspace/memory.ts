import { Readable } from 'node:stream';
import { AgentControlError } from '@agentyard/agent-gateway';
import type { AgentWorkspace, WorkspaceLimits } from '@agentyard/runtime';
import { onWorkspace } from './workspace-files.ts';
import { AgentWorkErrors } from '../../errors.ts';
import { onAgentControlPlane, type AgentGateway } from '../gateway/agent-gateway-access.ts';

/**
 * An agent's memory as its gateway keeps it: the workspace `MEMORY.md` (read and written with
 * `agents.files.get/set`, which reach only the workspace's bootstrap files) and the `memory/*.md`
 * files (listed and read with the read-only `agents.workspace.list/get`, confined by the gateway to
 * the real workspace, and written or deleted through the platform's own confined access to the
 * workspace). OpenClaw's default agent is `main`. Only MEMORY.md is put in every turn's prompt;
 * the agent reads memory/*.md on demand with its memory_search / memory_get tools.
 */
const AGENT = 'main';
const MEMORY_FILE = 'MEMORY.md';
const MEMORY_PATH = /^memory\/[A-Za-z0-9._-]{1,128}\.md$/;

/** `memory/<name>.md` or 400: no `..`, no absolute path, nothing outside memory/. */
export function memoryPathOf(path: string): string {
  if (!MEMORY_PATH.test(path) || path.split('/').includes('..')) throw AgentWorkErrors.badMemoryPath();
  return path;
}

const isoOf = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);
const missing = (error: unknown) =>
  error instanceof AgentControlError &&
  (error.details.type === 'workspace_path_not_found' || /not found/i.test(error.message));

export interface MemoryFileMeta {
  path: string;
  size: number;
  updatedAt: string | null;
}

export async function readMemory(
  gateway: AgentGateway,
  timeoutMs: number,
): Promise<{ memory: string; files: MemoryFileMeta[] }> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    const { file } = await client.call('agents.files.get', { agentId: AGENT, name: MEMORY_FILE }, timeoutMs);
    let entries: { path: string; kind?: string; size?: number; updatedAtMs?: number }[] = [];
    try {
      const listed = await client.call('agents.workspace.list', { agentId: AGENT, path: 'memory' }, timeoutMs);
      entries = Array.isArray(listed.entries) ? listed.entries : [];
    } catch (error) {
      if (!missing(error)) throw error; // no memory/ folder yet: no files
    }
    const files = entries
      .filter((e) => e.kind === 'file' && MEMORY_PATH.test(e.path))
      .map((e) => ({ path: e.path, size: e.size ?? 0, updatedAt: isoOf(e.updatedAtMs) }));
    return { memory: file.missing ? '' : (file.content ?? ''), files };
  });
}

export async function readMemoryFile(
  gateway: AgentGateway,
  path: string,
  timeoutMs: number,
): Promise<{ path: string; content: string; size: number; updatedAt: string | null }> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    try {
      const { file = {} } = await client.call('agents.workspace.get', { agentId: AGENT, path }, timeoutMs);
      // A memory file that is not UTF-8 text comes back base64-encoded.
      const content =
        typeof file.content !== 'string'
          ? ''
          : file.encoding === 'base64'
            ? Buffer.from(file.content, 'base64').toString('utf8')
            : file.content;
      return {
        path,
        content,
        size: typeof file.size === 'number' ? file.size : Buffer.byteLength(content),
        updatedAt: isoOf(file.updatedAtMs),
      };
    } catch (error) {
      if (missing(error)) throw AgentWorkErrors.memoryFileNotFound();
      throw error;
    }
  });
}

/** Replaces MEMORY.md; the gateway reads the workspace's bootstrap files at the start of every turn. */
export async function writeMemory(
  gateway: AgentGateway,
  content: string,
  timeoutMs: number,
): Promise<{ path: string; size: number; updatedAt: string | null }> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    await client.call('agents.files.set', { agentId: AGENT, name: MEMORY_FILE, content }, timeoutMs);
    const { file } = await client.call('agents.files.get', { agentId: AGENT, name: MEMORY_FILE }, timeoutMs);
    return { path: MEMORY_FILE, size: file.size ?? Buffer.byteLength(content), updatedAt: isoOf(file.updatedAtMs) };
  });
}

/**
 * Writes a `memory/<name>.md` file through the platform's confined access to the workspace (the
 * gateway's control plane cannot write them), within the plan's workspace limits.
 */
export async function writeMemoryFile(
  workspace: AgentWorkspace,
  path: string,
  content: string,
  limits: WorkspaceLimits,
): Promise<{ path: string; size: number; updatedAt: string | null }> {
  return onWorkspace(async () => {
    const written = await workspace.write(memoryPathOf(path), Readable.from([Buffer.from(content)]), limits);
    const listed = await workspace.list('memory');
    return {
      path: written.path,
      size: written.size,
      updatedAt: listed.entries.find((e) => e.path === written.path)?.updatedAt ?? null,
    };
  });
}

/** Deletes a `memory/<name>.md` file; 404 when it is not there. */
export async function deleteMemoryFile(workspace: AgentWorkspace, path: string): Promise<{ path: string }> {
  const confined = memoryPathOf(path);
  try {
    return await onWorkspace(() => workspace.remove(confined));
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) throw AgentWorkErrors.memoryFileNotFound();
    throw error;
  }
}
