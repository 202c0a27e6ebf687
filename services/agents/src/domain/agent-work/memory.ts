import { AgentControlError } from '@agentyard/agent-gateway';
import { AgentWorkErrors, onAgentControlPlane, type AgentGateway } from './agent-gateway-access.ts';

/**
 * An agent's memory as its gateway keeps it: the workspace `MEMORY.md` (read and written with
 * `agents.files.get/set`, which reach only the workspace's bootstrap files) and the `memory/*.md`
 * files (listed and read with the read-only `agents.workspace.list/get`, confined by the gateway to
 * the real workspace). OpenClaw's default agent is `main`.
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
const missing = (error: unknown) => error instanceof AgentControlError && (error.details.type === 'workspace_path_not_found' || /not found/i.test(error.message));

export interface MemoryFileMeta { path: string; size: number; updatedAt: string | null }

export async function readMemory(gateway: AgentGateway, timeoutMs: number): Promise<{ memory: string; files: MemoryFileMeta[] }> {
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
    return { memory: file.missing ? '' : file.content ?? '', files };
  });
}

export async function readMemoryFile(gateway: AgentGateway, path: string, timeoutMs: number): Promise<{ path: string; content: string; size: number; updatedAt: string | null }> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    try {
      const file = await client.call('agents.workspace.get', { agentId: AGENT, path }, timeoutMs);
      const content = typeof file.content === 'string' ? file.content : '';
      return { path, content, size: typeof file.size === 'number' ? file.size : Buffer.byteLength(content), updatedAt: isoOf(file.updatedAtMs) };
    } catch (error) {
      if (missing(error)) throw AgentWorkErrors.memoryFileNotFound();
      throw error;
    }
  });
}

/** Replaces MEMORY.md; the gateway reads the workspace's bootstrap files at the start of every turn. */
export async function writeMemory(gateway: AgentGateway, content: string, timeoutMs: number): Promise<{ path: string; size: number; updatedAt: string | null }> {
  return onAgentControlPlane(gateway, timeoutMs, async (client) => {
    await client.call('agents.files.set', { agentId: AGENT, name: MEMORY_FILE, content }, timeoutMs);
    const { file } = await client.call('agents.files.get', { agentId: AGENT, name: MEMORY_FILE }, timeoutMs);
    return { path: MEMORY_FILE, size: file.size ?? Buffer.byteLength(content), updatedAt: isoOf(file.updatedAtMs) };
  });
}
