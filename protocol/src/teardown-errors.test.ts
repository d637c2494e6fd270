import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { VenusError } from './errors.ts';
import { createRootLogger } from './logger.ts';
import { isBenignTeardownError, logUnlessTeardown } from './teardown-errors.ts';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isBenignTeardownError', () => {
  it.each([
    ['a reset peer', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a broken pipe', withCode('write EPIPE', 'EPIPE')],
    ['a destroyed stream', withCode('Cannot call write after a stream was destroyed', 'ERR_STREAM_DESTROYED')],
    ['undici losing its socket', withCode('other side closed', 'UND_ERR_SOCKET')],
    ['ws sending on a closed socket', new Error('WebSocket is not open: readyState 3 (CLOSED)')],
    ['ws closed while connecting', new Error('WebSocket was closed before the connection was established')],
    ['ioredis after quit', new Error('Connection is closed.')],
    ['an abort we asked for', new DOMException('This operation was aborted', 'AbortError')],
    ['a node abort', withCode('The operation was aborted', 'ABORT_ERR')],
    ['a session that ended', new VenusError('session_closed', 'session s1 closed')],
    ['a wrapped reset', new Error('relay send failed', { cause: withCode('read ECONNRESET', 'ECONNRESET') })],
  ])('%s is teardown noise', (_name, error) => {
    expect(isBenignTeardownError(error)).toBe(true);
  });

  it.each([
    ['a type error', new TypeError("Cannot read properties of undefined (reading 'seq')")],
    [
      'a refused connection (nothing is listening: a misconfiguration)',
      withCode('connect ECONNREFUSED', 'ECONNREFUSED'),
    ],
    ['a seq conflict', new VenusError('timeline_seq_conflict', 'seq 4 does not continue 7')],
    ['a redis error reply', new Error('WRONGTYPE Operation against a key holding the wrong kind of value')],
    ['a message that only mentions a connection', new Error('Connection is closed for tenant t1 by quota')],
    ['a string', 'ECONNRESET'],
    ['undefined', undefined],
    ['null', null],
  ])('%s is not', (_name, error) => {
    expect(isBenignTeardownError(error)).toBe(false);
  });

  it('stops following causes after a few levels', () => {
    let error: Error = withCode('read ECONNRESET', 'ECONNRESET');
    for (let i = 0; i < 10; i++) error = new Error(`wrap ${i}`, { cause: error });
    expect(isBenignTeardownError(error)).toBe(false);
  });
});

describe('logUnlessTeardown', () => {
  it('logs teardown noise at debug and anything else at the asked level', () => {
    const levels: number[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        levels.push((JSON.parse(String(chunk)) as { level: number }).level);
        done();
      },
    });
    const log = createRootLogger({ level: 'debug', pii: false, destination });
    logUnlessTeardown(log, withCode('write EPIPE', 'EPIPE'), 'send failed');
    logUnlessTeardown(log, new TypeError('bug'), 'send failed');
    logUnlessTeardown(log, new TypeError('bug'), 'send failed', { level: 'error' });
    expect(levels).toEqual([20, 40, 50]);
  });
});
