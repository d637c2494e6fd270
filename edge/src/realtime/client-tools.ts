import {
  CLIENT_FUNCTION_LIMITS,
  type ClientFunction,
  ClientFunctionSchema,
  FUNCTIONS_LIMITS,
  type FunctionParameters,
  type Parameter,
  ParameterSchema,
  ParametersSchema,
} from '@venus/protocol';
import type { ProtocolError } from './protocol-error.ts';
import type { SessionNotice } from './session-state.ts';

export type ParsedTools =
  | { ok: true; tools: ClientFunction[]; notices: SessionNotice[] }
  | { ok: false; error: ProtocolError };

/** JSON Schema keywords the planner understands, per type (the subset deployed functions use). */
const KEEP: Record<string, readonly string[]> = {
  string: ['type', 'description', 'enum', 'minLength', 'maxLength', 'pattern', 'format', 'default'],
  number: ['type', 'description', 'enum', 'minimum', 'maximum', 'default'],
  integer: ['type', 'description', 'enum', 'minimum', 'maximum', 'default'],
  boolean: ['type', 'description', 'default'],
  array: ['type', 'description', 'items', 'minItems', 'maxItems'],
};
const FORMATS = new Set(['date-time', 'date', 'email', 'uri']);

/**
 * The `tools` of a `session.update` as the session's client functions. Function tools only: any
 * other type (MCP servers, built-in tools) is refused with `unsupported_feature`, not dropped. Each
 * tool's JSON Schema is projected onto the subset the planner extracts arguments for (scalars,
 * arrays of scalars, enums): keywords outside it are left out, and properties it cannot hold at all
 * (nested objects) are left out with a `tool_parameters_approximate` notice naming them. Sizes are
 * bounded (CLIENT_FUNCTION_LIMITS); past a bound the update is refused naming the field.
 *
 * @example
 *   parseTools([{ type: 'function', name: 'lookup_order', description: 'Finds an order',
 *     parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } }]);
 */
export function parseTools(tools: readonly unknown[]): ParsedTools {
  if (tools.length > CLIENT_FUNCTION_LIMITS.maxFunctions) {
    return fail('invalid_event', `at most ${CLIENT_FUNCTION_LIMITS.maxFunctions} tools`, 'session.tools');
  }
  const out: ClientFunction[] = [];
  const notices: SessionNotice[] = [];
  for (const [index, tool] of tools.entries()) {
    const param = `session.tools.${index}`;
    if (!isObject(tool)) return fail('invalid_event', 'a tool must be an object', param);
    if (tool.type !== 'function') {
      const type = JSON.stringify(tool.type);
      return fail(
        'unsupported_feature',
        `tools of type ${type} are not supported: declare function tools`,
        `${param}.type`,
      );
    }
    const { parameters, dropped } = projectParameters(tool.parameters);
    const parsed = ClientFunctionSchema.safeParse({
      name: tool.name,
      description: typeof tool.description === 'string' ? tool.description : '',
      parameters,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path.map(String).join('.') ?? '';
      return fail(
        'invalid_event',
        `tool ${index}: ${path} ${issue?.message ?? 'is invalid'}`.trim(),
        `${param}.${path}`,
      );
    }
    if (out.some((fn) => fn.name === parsed.data.name)) {
      return fail('invalid_event', `two tools are named ${parsed.data.name}`, `${param}.name`);
    }
    out.push(parsed.data);
    if (dropped.length > 0) {
      notices.push({
        code: 'tool_parameters_approximate',
        message: `${parsed.data.name}: the planner cannot fill ${dropped.join(', ')} (only strings, numbers, booleans, enums and arrays of them); those are left out of its calls`,
      });
    }
  }
  return { ok: true, tools: out, notices };
}

/** The tools as `session.created`/`session.updated` list them. */
export function presentTools(tools: readonly ClientFunction[] | undefined): Record<string, unknown>[] {
  return (tools ?? []).map(({ name, description, parameters }) => ({
    type: 'function',
    name,
    description,
    parameters,
  }));
}

function projectParameters(raw: unknown): { parameters: FunctionParameters; dropped: string[] } {
  const properties: Record<string, Parameter> = {};
  const dropped: string[] = [];
  const rawProperties = isObject(raw) && isObject(raw.properties) ? raw.properties : {};
  for (const [name, schema] of Object.entries(rawProperties)) {
    const projected = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name) ? projectProperty(schema) : undefined;
    if (projected === undefined || Object.keys(properties).length >= FUNCTIONS_LIMITS.maxProperties) dropped.push(name);
    else properties[name] = projected;
  }
  const required = isObject(raw) && Array.isArray(raw.required) ? raw.required : [];
  const parameters = ParametersSchema.parse({
    type: 'object',
    properties,
    required: required.filter((name): name is string => typeof name === 'string' && name in properties),
    additionalProperties: isObject(raw) && raw.additionalProperties === true,
  });
  return { parameters, dropped };
}

function projectProperty(raw: unknown, depth = 0): Parameter | undefined {
  if (!isObject(raw)) return undefined;
  // `["string", "null"]` (an optional field in strict mode) reads as its non-null type.
  const type = Array.isArray(raw.type) ? raw.type.find((t) => t !== 'null') : raw.type;
  const description = typeof raw.description === 'string' ? raw.description.slice(0, 500) : undefined;
  if (type === undefined && Array.isArray(raw.enum)) {
    return parse({ enum: raw.enum, ...(description === undefined ? {} : { description }) });
  }
  const keep = typeof type === 'string' ? KEEP[type] : undefined;
  if (keep === undefined) return undefined;
  const candidate: Record<string, unknown> = { type };
  for (const key of keep) {
    if (key === 'type' || raw[key] === undefined) continue;
    if (key === 'format' && !FORMATS.has(String(raw.format))) continue;
    if (key === 'items') {
      if (depth > 0) return undefined;
      const items = projectProperty(raw.items, depth + 1);
      if (items === undefined) return undefined;
      candidate.items = items;
      continue;
    }
    candidate[key] = key === 'description' ? description : raw[key];
  }
  return parse(candidate);
}

function parse(candidate: unknown): Parameter | undefined {
  const parsed = ParameterSchema.safeParse(candidate);
  return parsed.success ? parsed.data : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(code: ProtocolError['code'], message: string, param: string): ParsedTools {
  return { ok: false, error: { code, message, param } };
}
