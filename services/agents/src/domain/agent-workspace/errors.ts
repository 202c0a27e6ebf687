import { HttpError } from '@agentyard/http';

/** Every error of an agent's logs, files, metrics and events, named once. */
export const AgentWorkspaceErrors = {
  noLogs: () => new HttpError(501, 'Logs are not kept for agents run as local processes (RUNTIME_DRIVER=process)'),
  noWorkspace: () => new HttpError(501, "The agent's files are out of the platform's reach on a remote container engine"),
  noState: () => new HttpError(404, 'The agent has no workspace yet'),
  badPath: (message: string) => new HttpError(400, message),
  missing: (message: string) => new HttpError(404, message),
  fileTooLarge: (message: string, limit: number) => new HttpError(413, message, 'FILE_TOO_LARGE', { limit }),
  workspaceFull: (message: string, limit: number) => new HttpError(429, message, 'WORKSPACE_FULL', { limit }),
  engineFailed: () => new HttpError(502, 'The container engine did not answer'),
};
