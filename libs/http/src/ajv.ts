import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { isStorableDateTime } from '@agentyard/proto-schemas';

const common: Options = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false };

function build(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  // Stricter than RFC 3339: a date a client sends must be one JavaScript and PostgreSQL both hold (no leap second, no year 0).
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return ajv;
}

// Bodies are JSON and must already carry the right types: "5" is not 5. Query strings, params and
// headers are text and are coerced to their schema's types.
const strict = build({ coerceTypes: false });
const coercing = build({ coerceTypes: 'array' });

export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }) {
  return (httpPart === 'body' ? strict : coercing).compile(schema);
}
