import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpError } from '@agentyard/http';

export interface Violation { keyword?: string; instancePath?: string; params?: Record<string, unknown> }

/** A route error handler that gives a schema violation the spec's message; other errors go on. */
export function violationMessages(describe: (violation: Violation) => HttpError | undefined) {
  return (error: FastifyError, _request: FastifyRequest, _reply: FastifyReply) => {
    const mapped = error.validation ? describe(error.validation[0] as Violation) : undefined;
    throw mapped ?? error;
  };
}

export const isMissing = (violation: Violation, field?: string) =>
  violation.keyword === 'required' && (field === undefined || violation.params?.missingProperty === field);
