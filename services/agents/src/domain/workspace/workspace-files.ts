import {
  type AgentWorkspace,
  agentWorkspace,
  type RuntimeDriver,
  type WorkspaceLedger,
  WorkspaceLimitError,
  WorkspaceMissingError,
  WorkspacePathError,
} from '@agentyard/runtime';
import { AgentWorkspaceErrors } from '../../errors.ts';

/**
 * The files of an agent's OpenClaw workspace (/home/node/.openclaw/workspace in its container),
 * confined to it: the one way routes reach them (uploads, skills' SKILL.md, memory files).
 * 501 where the driver cannot reach the agent's state (a remote engine). Writes reserve their bytes
 * in `ledger` (the platform's, workspace-admission.ts), so concurrent ones stay within the limits.
 */
export function workspaceOfAgent(driver: RuntimeDriver, agentId: string, ledger: WorkspaceLedger): AgentWorkspace {
  const state = driver.stateDirectory?.(agentId);
  if (!state) throw AgentWorkspaceErrors.noWorkspace();
  return agentWorkspace(state.path, { ownerUid: state.ownerUid, ledger });
}

/** Runs a workspace operation, answering its refusals as HTTP errors (400, 404, 413, 429). */
export async function onWorkspace<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof WorkspacePathError) throw AgentWorkspaceErrors.badPath(error.message);
    if (error instanceof WorkspaceMissingError) throw AgentWorkspaceErrors.missing(error.message);
    if (error instanceof WorkspaceLimitError) {
      throw error.kind === 'file'
        ? AgentWorkspaceErrors.fileTooLarge(error.message, error.limitBytes)
        : AgentWorkspaceErrors.workspaceFull(error.message, error.limitBytes);
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'ELOOP' || code === 'ENOTDIR')
      throw AgentWorkspaceErrors.badPath('Path is not a plain file or folder of the workspace');
    throw error;
  }
}
