import { ParametersSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { extractArguments } from './argument-extraction.ts';
import { parametersValidator } from './parameters-validator.ts';

const params = ParametersSchema.parse({
  type: 'object',
  properties: {
    amount: { type: 'number' },
    to: { type: 'string', enum: ['EUR', 'USD', 'JPY'] },
    note: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['amount', 'to'],
});

describe('extractArguments', () => {
  it('reads key=value pairs and JSON objects', () => {
    expect(extractArguments('convert amount=12.5 to="EUR" tags=a,b', params)).toEqual({
      amount: 12.5,
      to: 'EUR',
      tags: ['a', 'b'],
    });
    expect(extractArguments('convert {"amount": 3, "to": "JPY"} please', params)).toEqual({ amount: 3, to: 'JPY' });
  });

  it('fills required properties from the schema: an enum value mentioned, the only number', () => {
    expect(extractArguments('how much is 20 dollars in usd', params)).toEqual({ amount: 20, to: 'USD' });
    expect(extractArguments('convert 20 or 30 to usd', params)).toBeNull();
    expect(extractArguments('convert 20 to pounds', params)).toBeNull();
  });

  it('gives the whole query to a single free-text property', () => {
    const search = ParametersSchema.parse({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    expect(extractArguments('look up the opening hours of the museum', search)).toEqual({
      q: 'look up the opening hours of the museum',
    });
  });

  it('gives an identifier property the only token with a digit, and nothing when there are several', () => {
    const order = ParametersSchema.parse({
      type: 'object',
      properties: { order_id: { type: 'string' }, note: { type: 'string' } },
      required: ['order_id'],
    });
    expect(extractArguments('where is my order 4417?', order)).toEqual({ order_id: '4417' });
    expect(extractArguments('where is order AB-12?', order)).toEqual({ order_id: 'AB-12' });
    expect(extractArguments('is order 12 or 13 here', order)).toBeNull();
    expect(extractArguments('where is my order', order)).toBeNull();
  });
});

describe('parametersValidator', () => {
  it('enforces types, bounds, enums, required and unknown keys', () => {
    const validator = parametersValidator(
      ParametersSchema.parse({
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 1, maximum: 5 },
          s: { type: 'string', maxLength: 3, pattern: '^[a-z]+$' },
          flag: { type: 'boolean', default: true },
        },
        required: ['n'],
      }),
    );
    expect(validator.parse({ n: 2, s: 'abc' })).toEqual({ n: 2, s: 'abc', flag: true });
    for (const bad of [{}, { n: 2.5 }, { n: 9 }, { n: 1, s: 'abcd' }, { n: 1, s: 'AB' }, { n: 1, x: 1 }]) {
      expect(validator.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses a schema it cannot honour', () => {
    expect(() =>
      parametersValidator(
        ParametersSchema.parse({ type: 'object', properties: { s: { type: 'string', pattern: '(' } } }),
      ),
    ).toThrow(/not a valid regular expression/);
    expect(
      ParametersSchema.safeParse({ type: 'object', properties: { s: { type: 'string', oneOf: [] } } }).success,
    ).toBe(false);
  });
});
