import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '@agentyard/http';
import { WorkspaceErrors } from '../../domain/workspace/errors.ts';

/** What the platform's JSON parser says of a body it cannot read. */
const UNREADABLE_BODY = new Set(['Body is not valid JSON', 'Body contains a NUL character']);

interface Violation { keyword?: string; instancePath?: string; params?: Record<string, unknown> }

/**
 * A route error handler giving the spec's 400 messages: a body that is not a JSON object is
 * `Invalid request body`; a schema violation is whatever `describe` says (else the same). Other
 * errors go on to the service's error handler.
 */
export function bodyErrors(describe: (violation: Violation) => HttpError | undefined) {
  return (error: FastifyError, _request: FastifyRequest, _reply: FastifyReply) => {
    if (error.validation && error.validationContext === 'body') throw describe(error.validation[0] as Violation) ?? WorkspaceErrors.invalidRequestBody();
    const unreadable = error.code?.startsWith('FST_ERR_CTP') === true || (error instanceof HttpError && UNREADABLE_BODY.has(error.message));
    if (unreadable) throw WorkspaceErrors.invalidRequestBody();
    throw error;
  };
}

export const isMissing = (violation: Violation, field?: string) =>
  violation.keyword === 'required' && (field === undefined || violation.params?.missingProperty === field);
