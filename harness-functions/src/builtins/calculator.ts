import { z } from 'zod';
import { abortableSleep } from '../abortable.ts';
import type { VenusFunction } from '../function-definition.ts';
import { evaluateArithmetic, extractArithmetic, speakArithmetic } from './arithmetic.ts';
import type { BuiltinOptions } from './latency.ts';
import { convertUnits, findUnit, formatNumber, speakQuantity, UNIT_WORDS } from './unit-conversion.ts';

export const CalculatorArgsSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('arithmetic'),
    expression: z.string().min(1).max(500).describe('Numbers with + - * / ^ %, "of" and parentheses'),
  }),
  z.object({
    kind: z.literal('convert'),
    value: z.number().finite(),
    from: z.string().min(1).describe('Unit to convert from, e.g. "mi", "kg", "f"'),
    to: z.string().min(1).describe('Unit to convert to, e.g. "km", "lb", "c"'),
  }),
]);
export type CalculatorArgs = z.infer<typeof CalculatorArgsSchema>;

const NUMBER = String.raw`(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)`;
const PHRASE = '([a-z°/][a-z°/ .]*?)';
/** "convert 5 miles to km", "72 fahrenheit in celsius", "10 kg as pounds". */
const VALUE_FIRST = new RegExp(String.raw`${NUMBER}\s*${PHRASE}\s+(?:to|in|into|as)\s+(.+)$`, 'i');
/** "how many feet in 3 meters", "how many cups are in 2 liters". */
const TARGET_FIRST = new RegExp(
  String.raw`how many\s+${PHRASE}\s+(?:are\s+)?(?:in|is|are|make|makes)\s+(?:a\s+)?${NUMBER}\s*(.+)$`,
  'i',
);

function extractConversion(query: string): CalculatorArgs | null {
  const text = query.trim();
  const valueFirst = VALUE_FIRST.exec(text);
  const fromValueFirst = valueFirst && conversion(valueFirst[1], valueFirst[2], valueFirst[3]);
  if (fromValueFirst) return fromValueFirst;
  const targetFirst = TARGET_FIRST.exec(text);
  return targetFirst && conversion(targetFirst[2], targetFirst[3], targetFirst[1]);
}

/** A conversion when both phrases name known units. */
function conversion(
  number: string | undefined,
  fromPhrase: string | undefined,
  toPhrase: string | undefined,
): CalculatorArgs | null {
  const from = findUnit(fromPhrase ?? '');
  const to = findUnit(toPhrase ?? '');
  return from !== null && to !== null ? { kind: 'convert', value: parseNumber(number ?? ''), from, to } : null;
}

function parseNumber(text: string): number {
  return Number(text.replaceAll(',', ''));
}

/**
 * Arithmetic (a small safe parser, no eval) and unit conversion for length, mass, temperature,
 * volume and speed.
 *
 * @example
 *   const calculator = createCalculator({ latencyMs: 0 });
 *   calculator.extract('what is 12% of 80'); // { kind: 'arithmetic', expression: '12 % of 80' }
 *   calculator.extract('convert 5 miles to km'); // { kind: 'convert', value: 5, from: 'mi', to: 'km' }
 */
export function createCalculator(options: BuiltinOptions = {}): VenusFunction<CalculatorArgs> {
  const latencyMs = options.latencyMs ?? 200;
  return {
    name: 'calculator',
    description:
      'Calculates arithmetic (plus, minus, times, divided by, powers, percent of, parentheses) and converts ' +
      'units of length, mass, weight, temperature, volume and speed.',
    parameters: CalculatorArgsSchema,
    examples: [
      'what is 12% of 80',
      "what's 3 + 4 * 2",
      'how much is 15 plus 27',
      'calculate (2 + 3) ^ 2 / 5',
      'convert 5 miles to km',
      '72 fahrenheit in celsius',
      'how many feet in 3 meters',
    ],
    keywords: ['math', 'sum', 'add', 'multiply', 'divide', 'subtract', 'compute', 'equal', ...UNIT_WORDS],
    extract(query) {
      const conversion = extractConversion(query);
      if (conversion !== null) return conversion;
      const expression = extractArithmetic(query);
      return expression === null ? null : { kind: 'arithmetic', expression };
    },
    async run(args, ctx) {
      await abortableSleep(latencyMs, ctx.signal);
      if (args.kind === 'convert') {
        const conversion = convertUnits(args.value, args.from, args.to);
        return {
          data: conversion,
          speech: `${speakQuantity(conversion.value, conversion.from)} is ${speakQuantity(conversion.result, conversion.to)}.`,
        };
      }
      const result = evaluateArithmetic(args.expression);
      const spoken = speakArithmetic(args.expression);
      const answer = formatNumber(result);
      return {
        data: { expression: args.expression, result },
        speech: spoken === null ? `That comes to ${answer}.` : `${spoken} is ${answer}.`,
      };
    },
  };
}
