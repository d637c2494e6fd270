import { VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import type { FunctionContext } from '../function-definition.ts';
import { evaluateArithmetic, extractArithmetic } from './arithmetic.ts';
import { createCalculator } from './calculator.ts';
import { convertUnits, findUnit } from './unit-conversion.ts';

function context(): FunctionContext {
  return { signal: new AbortController().signal, progress: () => {}, session: 's1', workId: 'w1' };
}

function failureCode(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return VenusError.isInstance(error) ? error.code : 'not a VenusError';
  }
  return undefined;
}

describe('evaluateArithmetic', () => {
  it.each([
    ['3 + 4 * 2', 11],
    ['(3 + 4) * 2', 14],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['2 ^ -1', 0.5],
    ['-(3 - 5) * 1.5', 3],
    ['.5 + 0.25', 0.75],
    ['0.1 + 0.2', 0.3],
    ['12% of 80', 9.6],
    ['50 percent of (10 + 30)', 20],
    ['15 plus 27 minus 2', 40],
    ['6 times 7 divided by 3', 14],
    ['2 to the power of 10', 1024],
    ['4 squared + 2 cubed', 24],
    ['1,000 x 3', 3000],
  ])('%s = %d', (expression, expected) => {
    expect(evaluateArithmetic(expression)).toBe(expected);
  });

  it.each(['1 / 0', '(1 + 2', '2 +', 'process.exit()', 'constructor', '3 4', ''])('rejects %j', (expression) => {
    expect(failureCode(() => evaluateArithmetic(expression))).toBe('invalid_arguments');
  });

  it('says why a division fails', () => {
    expect(() => evaluateArithmetic('5 / (2 - 2)')).toThrow("I can't divide by zero");
  });
});

describe('extractArithmetic', () => {
  it('finds the calculation inside a sentence', () => {
    expect(extractArithmetic('hey, what is 12% of 80?')).toBe('12 % of 80');
    expect(extractArithmetic('could you compute (1 + 2) * 3 for me')).toBe('( 1 + 2 ) * 3');
  });

  it('needs an operator', () => {
    expect(extractArithmetic('I was born in 1984')).toBeNull();
    expect(extractArithmetic('tell me a joke')).toBeNull();
  });
});

describe('unit conversion', () => {
  it.each([
    [5, 'mi', 'km', 8.04672],
    [1, 'ft', 'in', 12],
    [72, 'f', 'c', 22.2222222222],
    [-40, 'c', 'f', -40],
    [0, 'c', 'k', 273.15],
    [1, 'kg', 'lb', 2.20462262185],
    [16, 'oz', 'lb', 1],
    [1, 'gal', 'l', 3.785411784],
    [100, 'km/h', 'mph', 62.1371192237],
    [10, 'm/s', 'km/h', 36],
  ])('%d %s = %d %s', (value, from, to, expected) => {
    expect(convertUnits(value, from, to).result).toBeCloseTo(expected, 6);
  });

  it('refuses to mix categories', () => {
    expect(failureCode(() => convertUnits(1, 'kg', 'km'))).toBe('invalid_arguments');
  });

  it('reads units the way people say them', () => {
    expect(findUnit('miles per hour')).toBe('mph');
    expect(findUnit('degrees Fahrenheit?')).toBe('f');
    expect(findUnit('km please')).toBe('km');
    expect(findUnit('Kilometres')).toBe('km');
    expect(findUnit('bananas')).toBeNull();
  });
});

describe('calculator function', () => {
  const calculator = createCalculator({ latencyMs: 0 });

  it('speaks arithmetic results', async () => {
    const args = calculator.extract('what is 12% of 80');
    expect(args).toEqual({ kind: 'arithmetic', expression: '12 % of 80' });
    const output = await calculator.run(args!, context());
    expect(output).toEqual({ data: { expression: '12 % of 80', result: 9.6 }, speech: '12 percent of 80 is 9.6.' });
  });

  it('speaks conversions', async () => {
    expect((await calculator.run(calculator.extract('convert 5 miles to km')!, context())).speech).toBe(
      '5 miles is 8.05 kilometers.',
    );
    expect((await calculator.run(calculator.extract('72 fahrenheit in celsius')!, context())).speech).toBe(
      '72 degrees Fahrenheit is 22.22 degrees Celsius.',
    );
    expect((await calculator.run(calculator.extract('how many cups are in 2 liters')!, context())).speech).toBe(
      '2 liters is 8.45 cups.',
    );
  });

  it('answers parenthesized expressions without reading them out', async () => {
    expect((await calculator.run(calculator.extract('calculate (2+3)^2/5')!, context())).speech).toBe(
      'That comes to 5.',
    );
  });

  it('stops waiting when aborted', async () => {
    const slow = createCalculator({ latencyMs: 10_000 });
    const controller = new AbortController();
    const pending = slow.run({ kind: 'arithmetic', expression: '1 + 1' }, { ...context(), signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
