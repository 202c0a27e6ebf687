import type { FastifyError, FastifyRequest } from 'fastify';
import type { BadRequestMessages } from '@agentyard/proto-schemas';
import { HttpError } from './errors.ts';
import { BodyErrors } from './json-body.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route spec's 400 messages for schema violations, where it names them. */
    badRequest?: BadRequestMessages;
  }
}

export interface Violation {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** What the platform's JSON parser says of a body it cannot read. */
const UNREADABLE_BODY = new Set(Object.values(BodyErrors).map((error) => error().message));

/** A schema violation in words a client can act on: which field, what is wrong. */
export function describeViolation(violation: Violation | undefined, context: string): string {
  if (!violation) return `Invalid ${context}`;
  const field = (violation.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const where = field ? `${field} ` : '';
  switch (violation.keyword) {
    case 'required':
      return `${[field, violation.params?.missingProperty].filter(Boolean).join('.')} is required`;
    case 'additionalProperties':
      return `Unknown field: ${[field, violation.params?.additionalProperty].filter(Boolean).join('.')}`;
    default:
      return field
        ? `${where}${violation.message ?? 'is invalid'}`
        : `Invalid ${context}: ${violation.message ?? 'is invalid'}`;
  }
}

/** The route's own message for a violation, where its spec names one. */
function namedMessage(
  messages: BadRequestMessages,
  violation: Violation | undefined,
  context: string,
): string | undefined {
  if (messages.all) return messages.all;
  if (violation?.keyword === 'required') {
    const missing = messages.missing?.[String(violation.params?.missingProperty)] ?? messages.missing?.['*'];
    if (missing) return missing;
  }
  const invalid = messages.invalid?.[(violation?.instancePath ?? '').slice(1)];
  if (invalid) return invalid;
  return context === 'body' ? messages.body : undefined;
}

/**
 * The 400 message of a request the route's schema refuses, or of a body that cannot be read where
 * the route's spec names a message for it; undefined for any other error.
 */
export function badRequestMessage(error: FastifyError, request: FastifyRequest): string | undefined {
  const messages = request.routeOptions.config?.badRequest;
  if (error.validation) {
    const context = error.validationContext ?? 'request';
    return (
      (messages && namedMessage(messages, error.validation[0], context)) ??
      describeViolation(error.validation[0], context)
    );
  }
  const unreadable =
    error.code?.startsWith('FST_ERR_CTP') === true ||
    (error instanceof HttpError && UNREADABLE_BODY.has(error.message));
  return unreadable ? messages?.body : undefined;
}
