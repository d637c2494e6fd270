import { describe, expect, it } from 'vitest';
import { throttledErrorLog } from './error-log.ts';

describe('throttledErrorLog', () => {
  it('prints each kind of error once per window and counts the repeats it held back', () => {
    let clock = 0;
    const lines: string[] = [];
    const log = throttledErrorLog(
      'consumer',
      1_000,
      (line) => lines.push(line),
      () => clock,
    );
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    log(refused);
    log(refused);
    log(new Error('other'));
    clock = 500;
    log(refused);
    clock = 1_200;
    log(refused);
    expect(lines).toEqual(['consumer:', 'consumer:', 'consumer (2 more like it held back):']);
  });
});
