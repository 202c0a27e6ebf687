/** An error whose status, message and code are meant for the client (rule 4: `{error, code?}`). */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: string | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(statusCode: number, message: string, code?: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.code = code;
    this.extra = extra;
  }
}

export interface ErrorBody {
  error: string;
  code?: string;
  [key: string]: unknown;
}

export function errorBody(error: HttpError): ErrorBody {
  return { ...error.extra, error: error.message, ...(error.code ? { code: error.code } : {}) };
}
