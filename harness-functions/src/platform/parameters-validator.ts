import { type FunctionParameters, type Parameter, VenusError } from '@venus/protocol';
import { RE2JS } from 're2js';
import { z } from 'zod';

/**
 * Turns a deployed function's JSON Schema (the subset `ParametersSchema` admits) into a zod schema
 * that validates its arguments: what the platform checks before an invocation, and what the router
 * checks after extracting arguments from plain language. Throws `invalid_arguments` for a schema
 * that parses but cannot be honoured (a bad regular expression, min above max). Patterns are
 * tenants' regular expressions run on the thread that serves every session, so they run on RE2
 * (re2js: linear time, no backtracking) and never on V8's backtracking engine: `^(a+)+$` against
 * 64 KB costs milliseconds, not years. RE2 has no backreferences or lookaround; a pattern that needs
 * them is refused at deploy.
 *
 * @example
 *   const args = parametersValidator({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'],
 *     additionalProperties: false });
 *   args.parse({ n: 3 }); // { n: 3 }
 */
export function parametersValidator(parameters: FunctionParameters): z.ZodType<Record<string, unknown>> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, parameter] of Object.entries(parameters.properties)) {
    const schema = parameterValidator(name, parameter);
    shape[name] = parameters.required.includes(name) ? schema : schema.optional();
  }
  const object = z.object(shape);
  return (parameters.additionalProperties ? object.loose() : object.strict()) as z.ZodType<Record<string, unknown>>;
}

function parameterValidator(name: string, parameter: Parameter): z.ZodType {
  if (!('type' in parameter)) {
    const [first, ...rest] = parameter.enum.map((value) => z.literal(value));
    return rest.length === 0 ? first! : z.union([first!, ...rest]);
  }
  switch (parameter.type) {
    case 'string': {
      let schema: z.ZodType;
      if (parameter.enum) {
        schema = z.enum(parameter.enum as [string, ...string[]]);
      } else {
        let text = z.string();
        checkRange(name, parameter.minLength, parameter.maxLength);
        if (parameter.minLength !== undefined) text = text.min(parameter.minLength);
        if (parameter.maxLength !== undefined) text = text.max(parameter.maxLength);
        if (parameter.pattern !== undefined) {
          const pattern = compilePattern(name, parameter.pattern);
          // JSON Schema patterns are unanchored searches, as RE2's test().
          text = text.refine((value) => pattern.test(value), `must match the pattern ${parameter.pattern}`);
        }
        schema = withFormat(text, parameter.format);
      }
      return parameter.default === undefined ? schema : schema.default(parameter.default);
    }
    case 'number':
    case 'integer': {
      let number = parameter.type === 'integer' ? z.number().int() : z.number();
      checkRange(name, parameter.minimum, parameter.maximum);
      if (parameter.minimum !== undefined) number = number.min(parameter.minimum);
      if (parameter.maximum !== undefined) number = number.max(parameter.maximum);
      const values = parameter.enum;
      const schema = values ? number.refine((n) => values.includes(n), `must be one of ${values.join(', ')}`) : number;
      return parameter.default === undefined ? schema : schema.default(parameter.default);
    }
    case 'boolean':
      return parameter.default === undefined ? z.boolean() : z.boolean().default(parameter.default);
    case 'array': {
      let array = z.array(parameterValidator(name, parameter.items));
      checkRange(name, parameter.minItems, parameter.maxItems);
      if (parameter.minItems !== undefined) array = array.min(parameter.minItems);
      if (parameter.maxItems !== undefined) array = array.max(parameter.maxItems);
      return array;
    }
  }
}

function withFormat(text: z.ZodString, format: 'date-time' | 'date' | 'email' | 'uri' | undefined): z.ZodType {
  switch (format) {
    case 'date-time':
      return text.pipe(z.iso.datetime({ offset: true }));
    case 'date':
      return text.pipe(z.iso.date());
    case 'email':
      return text.pipe(z.email());
    case 'uri':
      return text.pipe(z.url());
    default:
      return text;
  }
}

function checkRange(name: string, min: number | undefined, max: number | undefined): void {
  if (min !== undefined && max !== undefined && min > max) {
    throw new VenusError('invalid_arguments', `parameters.${name}: the minimum ${min} is above the maximum ${max}`);
  }
}

function compilePattern(name: string, pattern: string): RE2JS {
  try {
    // A valid ECMAScript pattern is what JSON Schema means; compiling one runs nothing.
    new RegExp(pattern, 'u');
  } catch (error) {
    throw new VenusError('invalid_arguments', `parameters.${name}.pattern is not a valid regular expression`, {
      cause: error,
    });
  }
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    throw new VenusError(
      'invalid_arguments',
      `parameters.${name}.pattern needs backtracking (a backreference or lookaround), which this platform does not run: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
