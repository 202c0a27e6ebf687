import { HttpError } from '@agentyard/http';

/** Every error of the workspace area (configuration, devices, workflows), with the spec's messages. */
export const WorkspaceErrors = {
  invalidRequestBody: () => new HttpError(400, 'Invalid request body'),
  invalidConfigObject: () => new HttpError(400, 'Invalid config object'),
  configNotJson: () => new HttpError(400, 'Config is not valid JSON'),
  configRejected: (message: string) => new HttpError(400, message),
  missingBackupId: () => new HttpError(400, 'Missing backupId'),
  backupNotFound: () => new HttpError(404, 'Backup not found'),
  missingDeviceFields: () => new HttpError(400, 'Missing required fields: deviceId, action'),
  invalidDeviceAction: () => new HttpError(400, 'Invalid action. Must be: approve, deny, or revoke'),
  deviceNotPending: () => new HttpError(400, 'Device is not pending'),
  deviceNotApproved: () => new HttpError(400, 'Device is not approved'),
  deviceNotFound: () => new HttpError(404, 'Device not found'),
  workflowNameRequired: () => new HttpError(400, 'Workflow name is required'),
  invalidNodeConfig: () => new HttpError(400, 'Node config must be a JSON object'),
  invalidNodePosition: () => new HttpError(400, 'Node position must be JSON {x, y} with numbers'),
  workflowLimit: (limit: number) => new HttpError(429, `Workflow limit reached: at most ${limit} per user; delete one first`, 'WORKFLOW_LIMIT', { limit }),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  workflowNotFound: () => new HttpError(404, 'Workflow not found'),
  userNotFound: () => new HttpError(404, 'User not found'),
};
