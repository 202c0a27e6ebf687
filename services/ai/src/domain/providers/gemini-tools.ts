import { randomBytes } from 'node:crypto';
import { UpstreamError } from '@agentyard/http';
import { isJsonObject, type Conversation, type ToolChoice } from './conversation.ts';
import type { ToolCall } from './types.ts';

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const malformed = () => new UpstreamError('provider sent a malformed tool call');

// The keys of Gemini's Schema (a subset of OpenAPI 3.0); any other JSON Schema key is refused by the API.
const KEPT = [
  'title',
  'description',
  'nullable',
  'default',
  'example',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
];
// Formats Gemini accepts, per type; others are refused.
const FORMATS: Record<string, string[]> = {
  STRING: ['enum', 'date-time'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
const MAX_DEPTH = 32;

/** A JSON Schema pointer of the `#/$defs/x` kind, resolved in the root schema. */
function resolved(schema: Record<string, unknown>, root: Record<string, unknown>): Record<string, unknown> {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 8; hops++) {
    const path = current.$ref.startsWith('#/') ? current.$ref.slice(2).split('/') : null;
    let target: unknown = path ? root : undefined;
    for (const key of path ?? [])
      target = isJsonObject(target) ? target[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isJsonObject(target)) return {};
    const { $ref: _ref, ...rest } = current;
    current = { ...target, ...rest };
  }
  return current;
}

/**
 * A JSON Schema in the subset Gemini accepts: local `$ref`s inlined, `type: [x, "null"]` as
 * `nullable`, `oneOf` as `anyOf`, `const` as a one-value enum, enums of strings only, supported
 * formats only, `required` limited to declared properties, and every other key dropped.
 */
export function geminiSchema(input: unknown, root: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (!isJsonObject(input) || depth > MAX_DEPTH) return {};
  const schema = resolved(input, root);
  const out: Record<string, unknown> = {};
  for (const key of KEPT) if (schema[key] !== undefined) out[key] = schema[key];
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (t): t is string => typeof t === 'string',
  );
  if (types.includes('null')) out.nullable = true;
  const real = types.filter((t) => TYPES.has(t));
  if (real.length === 1) out.type = real[0]!.toUpperCase();
  else if (real.length > 1) out.anyOf = real.map((t) => ({ type: t.toUpperCase() }));
  else if (isJsonObject(schema.properties)) out.type = 'OBJECT';
  const format = typeof schema.format === 'string' ? schema.format : undefined;
  if (format && FORMATS[String(out.type)]?.includes(format)) out.format = format;
  const values = schema.const !== undefined ? [schema.const] : schema.enum;
  if (Array.isArray(values) && values.length && values.every((v) => typeof v === 'string')) {
    out.enum = values;
    out.type ??= 'STRING';
    if (out.type === 'STRING') out.format = 'enum';
  }
  if (isJsonObject(schema.properties)) {
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, value]) => [name, geminiSchema(value, root, depth + 1)]),
    );
    if (Object.keys(properties).length) out.properties = properties;
    const required = Array.isArray(schema.required)
      ? schema.required.filter((name) => typeof name === 'string' && name in properties)
      : [];
    if (required.length) out.required = required;
  }
  if (isJsonObject(schema.items)) out.items = geminiSchema(schema.items, root, depth + 1);
  // Gemini refuses an array without `items` ("items: missing field"); strings are the usual stand-in for "any".
  else if (out.type === 'ARRAY') out.items = { type: 'STRING' };
  const alternatives = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined;
  if (alternatives && !out.anyOf) out.anyOf = alternatives.map((s) => geminiSchema(s, root, depth + 1));
  if (Array.isArray(out.propertyOrdering) && !out.properties) delete out.propertyOrdering;
  return out;
}

/** A tool's result as the object a `functionResponse` carries: the result itself when it is a JSON object. */
function responseOf(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text);
    return isJsonObject(value) ? value : { result: value };
  } catch {
    return { result: text };
  }
}

function geminiContents(conversation: Conversation): Content[] {
  const contents: Content[] = [];
  for (const turn of conversation.turns) {
    const parts: Part[] = [];
    if (turn.role === 'tool') parts.push({ functionResponse: { name: turn.name, response: responseOf(turn.text) } });
    else if (turn.text) parts.push({ text: turn.text });
    if (turn.role === 'assistant') {
      for (const call of turn.toolCalls)
        parts.push({
          functionCall: { name: call.name, args: call.input },
          ...(call.signature ? { thoughtSignature: call.signature } : {}),
        });
    }
    if (parts.length === 0) continue;
    const role = turn.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

function functionCallingConfig(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  if (typeof choice === 'object') return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  return undefined;
}

/** The `contents`, `systemInstruction`, `tools` and `toolConfig` of a generateContent request. */
export function geminiTurns(conversation: Conversation): Record<string, unknown> {
  const declarations = conversation.tools.map((tool) => {
    const parameters: Record<string, unknown> | undefined = tool.parameters
      ? { ...geminiSchema(tool.parameters, tool.parameters), type: 'OBJECT' }
      : undefined;
    return {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      // An object schema without properties is refused; a function without arguments declares none.
      ...(parameters?.properties ? { parameters } : {}),
    };
  });
  const config = declarations.length ? functionCallingConfig(conversation.toolChoice) : undefined;
  return {
    contents: geminiContents(conversation),
    ...(conversation.system ? { systemInstruction: { parts: [{ text: conversation.system }] } } : {}),
    ...(declarations.length ? { tools: [{ functionDeclarations: declarations }] } : {}),
    ...(config ? { toolConfig: { functionCallingConfig: config } } : {}),
  };
}

/**
 * Text and tool calls of the parts of one answer (or one streamed chunk of it). Gemini gives its
 * calls no ids unless it has some; the ones made here are unique to the answer and stable in it.
 */
export class GeminiAnswer {
  private readonly prefix = randomBytes(6).toString('hex');
  private calls = 0;

  read(parts: unknown): { text: string; toolCalls: (ToolCall & { index: number })[] } {
    let text = '';
    const toolCalls: (ToolCall & { index: number })[] = [];
    for (const part of Array.isArray(parts) ? parts : []) {
      if (!isJsonObject(part)) continue;
      if (typeof part.text === 'string' && part.thought !== true) text += part.text;
      if (part.functionCall === undefined) continue;
      const call = part.functionCall;
      if (
        !isJsonObject(call) ||
        typeof call.name !== 'string' ||
        !call.name ||
        (call.args !== undefined && !isJsonObject(call.args))
      )
        throw malformed();
      const index = this.calls++;
      toolCalls.push({
        index,
        id: typeof call.id === 'string' && call.id ? call.id : `call_${this.prefix}_${index}`,
        name: call.name,
        arguments: JSON.stringify(call.args ?? {}),
        ...(typeof part.thoughtSignature === 'string' ? { signature: part.thoughtSignature } : {}),
      });
    }
    return { text, toolCalls };
  }

  get called(): boolean {
    return this.calls > 0;
  }
}

/** Finish reasons by which Gemini says the model's call could not be used. */
export const MALFORMED_CALL_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);
