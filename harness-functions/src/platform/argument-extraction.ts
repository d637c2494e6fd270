import type { FunctionParameters, Parameter } from '@venus/protocol';

/**
 * Arguments for a deployed function from a plain-language delegation query, without a model:
 * 1. a JSON object anywhere in the query (`{"city": "Paris"}`);
 * 2. `key=value` or `key: value` pairs naming declared properties (values may be quoted);
 * 3. for required properties still missing: an enum value the query mentions; the only number in
 *    the query for a single missing numeric property; and, when exactly one free-text string
 *    property is missing, the whole query (minus what steps 1-2 used); but a string property named
 *    as an identifier (`order_id`, `tracking_number`, `code`) takes the only token with a digit in it.
 * Returns null when a required property is still missing. Limitation: anything subtler ("the
 * second one", dates in words, two free-text fields) needs a model-backed planner.
 *
 * @example
 *   extractArguments('convert amount=12.5 to="EUR"', params); // { amount: 12.5, to: 'EUR' }
 */
export function extractArguments(query: string, parameters: FunctionParameters): Record<string, unknown> | null {
  const properties = parameters.properties;
  const args: Record<string, unknown> = {};
  let rest = query;

  const json = findJsonObject(query);
  if (json !== null) {
    for (const [key, value] of Object.entries(json.value)) if (key in properties) args[key] = value;
    rest = rest.replace(json.text, ' ');
  }

  const pair = /\b([A-Za-z_][A-Za-z0-9_]*)\s*[=:]\s*(?:"([^"]*)"|'([^']*)'|([^\s;]+))/g;
  for (const match of query.matchAll(pair)) {
    const key = match[1]!;
    const property = properties[key];
    if (property === undefined || key in args) continue;
    const raw = match[2] ?? match[3] ?? match[4] ?? '';
    const value = coerce(raw.replace(/[.,!?]+$/, ''), property);
    if (value !== undefined) {
      args[key] = value;
      rest = rest.replace(match[0], ' ');
    }
  }

  const missing = parameters.required.filter((key) => !(key in args));
  const numbers = [...rest.matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
  const missingNumeric = missing.filter((key) => isNumeric(properties[key]!));
  const missingText = missing.filter((key) => isFreeText(properties[key]!));
  const digitTokens = [...rest.matchAll(/[A-Za-z0-9][A-Za-z0-9-]*/g)].map((m) => m[0]).filter((t) => /\d/.test(t));
  for (const key of missing) {
    const property = properties[key]!;
    const choices = enumValues(property);
    if (isFreeText(property) && IDENTIFIER_NAME.test(key)) {
      if (digitTokens.length === 1) args[key] = digitTokens[0];
    } else if (choices !== undefined) {
      const mentioned = choices.filter((choice) => mentions(rest, String(choice)));
      if (mentioned.length === 1) args[key] = mentioned[0];
    } else if (isNumeric(property) && missingNumeric.length === 1 && numbers.length === 1) {
      args[key] = numbers[0];
    } else if (isFreeText(property) && missingText.length === 1) {
      const text = rest.replace(/\s+/g, ' ').trim();
      if (text !== '') args[key] = text;
    }
  }
  return parameters.required.every((key) => key in args) ? args : null;
}

/** Property names that ask for an identifier rather than free text. */
const IDENTIFIER_NAME = /(?:^|_)(?:id|number|no|code|ref|reference)$/i;

function findJsonObject(query: string): { text: string; value: Record<string, unknown> } | null {
  const start = query.indexOf('{');
  const end = query.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  const text = query.slice(start, end + 1);
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { text, value: value as Record<string, unknown> }
      : null;
  } catch {
    return null;
  }
}

function coerce(raw: string, property: Parameter): unknown {
  const type = 'type' in property ? property.type : undefined;
  if (type === 'number' || type === 'integer') {
    const n = Number(raw);
    return Number.isFinite(n) ? n : undefined;
  }
  if (type === 'boolean') {
    if (/^(?:true|yes|on)$/i.test(raw)) return true;
    if (/^(?:false|no|off)$/i.test(raw)) return false;
    return undefined;
  }
  if ('type' in property && property.type === 'array') {
    const items = property.items;
    return raw.split(',').map((item) => coerce(item.trim(), items));
  }
  if (type === undefined) {
    const choices = enumValues(property) ?? [];
    return choices.find((choice) => String(choice).toLowerCase() === raw.toLowerCase());
  }
  return raw;
}

function enumValues(property: Parameter): readonly (string | number)[] | undefined {
  if (!('type' in property)) return property.enum;
  return property.type === 'string' || property.type === 'number' || property.type === 'integer'
    ? property.enum
    : undefined;
}

function isNumeric(property: Parameter): boolean {
  return (
    'type' in property && (property.type === 'number' || property.type === 'integer') && property.enum === undefined
  );
}

function isFreeText(property: Parameter): boolean {
  return (
    'type' in property && property.type === 'string' && property.enum === undefined && property.format === undefined
  );
}

function mentions(text: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:^|[^\\p{L}\\p{N}])${escaped}(?:$|[^\\p{L}\\p{N}])`, 'iu').test(text);
}
