import { Type, type TSchema } from 'typebox';

/** Rule 4: every error is `{error}`, plus `code` where the interface gives one. */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const Id = Type.String({ minLength: 1, maxLength: 128 });
export const Uuid = Type.String({ format: 'uuid' });
export const Email = Type.String({ format: 'email', maxLength: 320 });

/**
 * An instant as RFC 3339 text with a zone, held to what both JavaScript (±8.64e15 ms) and
 * PostgreSQL's timestamptz (4713 BC to 294276 AD, zone offsets within ±15:59) can hold, and to
 * years 1 to 9999 in UTC so it round-trips through `toISOString()`. No leap seconds: JavaScript
 * cannot hold them. The validators of every service check `date-time` with `isStorableDateTime`.
 */
export const IsoDate = Type.String({ format: 'date-time', maxLength: 64 });

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|([+-])(\d{2}):(\d{2}))$/i;
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysInMonth = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** Whether `text` is an IsoDate both JavaScript and PostgreSQL hold as the same instant. */
export function isStorableDateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (match[7] && (Number(match[8]) > 15 || Number(match[9]) > 59)) return false;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return false;
  const utcYear = new Date(ms).getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999;
}

/**
 * The user context a backend caller names (`x-user-id`, `x-user-email`): the edge signs it into the caller's
 * identity, so it is input like any other and is checked here. Every backend route that takes the
 * internal API key declares it (see `route()`); the web surface never carries it.
 */
export const UserContextHeaders = Type.Object({
  'x-user-id': Type.Optional(Uuid),
  'x-user-email': Type.Optional(Email),
});
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
