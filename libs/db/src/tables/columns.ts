import type { ColumnType, JSONColumnType } from 'kysely';

/** timestamptz: read as a Date, written as a Date or an ISO string (a default where omitted). */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** numeric: a string when read, so decimals stay exact; numbers accepted when written. */
export type Numeric = ColumnType<string, string | number, string | number>;
/** A json/jsonb column read as `T` and written as `W` (an encoded string where the driver is handed text). */
export type Json<T extends object | null = Record<string, unknown>, W = T> = JSONColumnType<T, W, W>;
