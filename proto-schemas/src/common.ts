import { Type, type TSchema } from 'typebox';

/** Rule 4: every error is `{error}`, plus `code` where the spec gives one. */
export const ErrorBody = Type.Object({
  error: Type.String(),
  code: Type.Optional(Type.String()),
}, { additionalProperties: true });

export const Id = Type.String({ minLength: 1, maxLength: 128 });
export const Uuid = Type.String({ format: 'uuid' });
export const IsoDate = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Ok = Type.Object({ ok: Type.Literal(true) });
export const Success = Type.Object({ success: Type.Literal(true) });

/** The error responses every route may give, so the serializer knows them. */
export const Errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  410: ErrorBody,
  413: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  502: ErrorBody,
  503: ErrorBody,
};
