import { describe, expect, it } from 'vitest';
import { parseTools, presentTools } from './client-tools.ts';

describe('parseTools', () => {
  it('takes function tools as an SDK sends them (JSON Schema from zod), keeping what the planner reads', () => {
    const parsed = parseTools([
      {
        type: 'function',
        name: 'lookup_order',
        description: 'Looks up an order',
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {
            order_id: { type: 'string', description: 'The order number', title: 'Order id' },
            express: { type: ['boolean', 'null'] },
          },
          required: ['order_id', 'express'],
          additionalProperties: false,
        },
        strict: true,
      },
    ]);
    expect(parsed).toEqual({
      ok: true,
      notices: [],
      tools: [
        {
          name: 'lookup_order',
          description: 'Looks up an order',
          parameters: {
            type: 'object',
            properties: { order_id: { type: 'string', description: 'The order number' }, express: { type: 'boolean' } },
            required: ['order_id', 'express'],
            additionalProperties: false,
          },
        },
      ],
    });
    if (parsed.ok) expect(presentTools(parsed.tools)[0]).toMatchObject({ type: 'function', name: 'lookup_order' });
  });

  it('leaves out properties the planner cannot fill, with a notice naming them', () => {
    const parsed = parseTools([
      {
        type: 'function',
        name: 'book',
        parameters: {
          type: 'object',
          properties: { when: { type: 'string' }, guest: { type: 'object', properties: {} } },
          required: ['when', 'guest'],
        },
      },
    ]);
    expect(parsed.ok && parsed.tools[0]?.parameters).toEqual({
      type: 'object',
      properties: { when: { type: 'string' } },
      required: ['when'],
      additionalProperties: false,
    });
    expect(parsed.ok && parsed.notices.map((n) => [n.code, n.message.includes('guest')])).toEqual([
      ['tool_parameters_approximate', true],
    ]);
  });

  it('refuses other tool types, bad names, duplicates and too many tools, naming the field', () => {
    const fn = (name: string) => ({ type: 'function', name });
    expect(parseTools([fn('a'), { type: 'mcp', server_label: 'x' }])).toMatchObject({
      ok: false,
      error: { code: 'unsupported_feature', param: 'session.tools.1.type' },
    });
    expect(parseTools([fn('bad name')])).toMatchObject({
      ok: false,
      error: { code: 'invalid_event', param: 'session.tools.0.name' },
    });
    expect(parseTools([fn('a'), fn('a')])).toMatchObject({ ok: false, error: { param: 'session.tools.1.name' } });
    expect(parseTools(Array.from({ length: 33 }, (_, i) => fn(`f${i}`)))).toMatchObject({
      ok: false,
      error: { param: 'session.tools' },
    });
    expect(parseTools([{ ...fn('a'), description: 'x'.repeat(2001) }])).toMatchObject({
      ok: false,
      error: { param: 'session.tools.0.description' },
    });
  });
});
