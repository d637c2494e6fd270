import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeBehaviour, judgeFromEnv } from './llm-judge.ts';

/** A fake OpenAI-compatible chat endpoint that answers with a fixed label and keeps the last request. */
let last: { auth: string | undefined; body: { model: string; messages: { content: string }[] } } | null = null;
let answer = '{"label": "resume"}';
const fakeEndpoint = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (d) => {
    body += String(d);
  });
  req.on('end', () => {
    last = { auth: req.headers.authorization, body: JSON.parse(body) };
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ choices: [{ message: { content: answer } }] }));
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((r) => fakeEndpoint.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(fakeEndpoint.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => fakeEndpoint.close(() => r())));

describe('llm judge', () => {
  it('is off unless both the URL and the model are configured', () => {
    expect(judgeFromEnv({})).toBeNull();
    expect(judgeFromEnv({ EVAL_JUDGE_URL: 'http://x/v1/' })).toBeNull();
    expect(judgeFromEnv({ EVAL_JUDGE_URL: 'http://x/v1/', EVAL_JUDGE_MODEL: 'm' })).toEqual({
      url: 'http://x/v1',
      model: 'm',
    });
  });

  it('sends the texts to /chat/completions and reads the label', async () => {
    const input = {
      set: 'user_backchannel',
      context: 'Hello',
      overlap: 'mm-hm',
      before: 'Hello! I can',
      after: 'check the weather',
    };
    expect(await judgeBehaviour({ url, model: 'judge-1', apiKey: 'k' }, input)).toBe('resume');
    expect(last?.auth).toBe('Bearer k');
    expect(last?.body.model).toBe('judge-1');
    expect(last?.body.messages[1]?.content).toContain('Overlapping speech: mm-hm');
    answer = 'I would say respond.';
    expect(await judgeBehaviour({ url, model: 'judge-1' }, input)).toBe('respond');
  });
});
