import { HttpError } from './errors.ts';

/** The 400s of a body that cannot be read as JSON. */
export const BodyErrors = {
  nulCharacter: () => new HttpError(400, 'Body contains a NUL character'),
  notJson: () => new HttpError(400, 'Body is not valid JSON'),
};

/**
 * A JSON body as the platform reads it, refusing NUL characters up front: PostgreSQL text cannot
 * hold them, and no field of the interface needs one. In JSON text a NUL can only appear escaped.
 */
export function parseJsonText(text: string): unknown {
  if (text.includes('\\u0000')) throw BodyErrors.nulCharacter();
  try {
    return JSON.parse(text);
  } catch {
    throw BodyErrors.notJson();
  }
}
