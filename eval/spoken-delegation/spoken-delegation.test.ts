import { describe, expect, it } from 'vitest';
import { type RequestIntent, understandRequest } from '../../gpu-worker/src/reference-model/intents.ts';
import { replyTo } from '../../gpu-worker/src/reference-model/replies.ts';
import { evaluateSpokenDelegation } from './evaluate.ts';
import { renderReport } from './report.ts';
import { buildRequests, SPEAKERS, type SpokenRequest } from './requests.ts';
import { confusion, NO_DELEGATION, normaliseArgs, scoreGroup, verdictOf, wordScore } from './score.ts';
import { Harness } from './trial.ts';

describe('spoken delegation scoring', () => {
  it('compares arguments without case, accents or whitespace, and nothing else', () => {
    expect(normaliseArgs({ when: 'now', city: 'São  Paulo' })).toEqual({ city: 'saopaulo', when: 'now' });
    const expected = { functionName: 'calculator', args: { kind: 'arithmetic', expression: '12 + 7' } };
    expect(
      verdictOf(expected, 'q', { functionName: 'calculator', args: { kind: 'arithmetic', expression: '12+7' } }),
    ).toBe('right');
    expect(
      verdictOf(expected, 'q', { functionName: 'calculator', args: { kind: 'arithmetic', expression: '12+8' } }),
    ).toBe('wrong_args');
    expect(verdictOf(expected, 'q', { functionName: 'weather', args: {} })).toBe('wrong_function');
    expect(verdictOf(expected, 'q', null)).toBe('no_function');
    expect(verdictOf(expected, null, null)).toBe('no_delegation');
  });

  it('counts words right and errors by word alignment', () => {
    expect(wordScore("What's the weather in Paris?", 'whats the weather in paris')).toEqual({
      right: 5,
      total: 5,
      errors: 0,
    });
    expect(wordScore('what time is it in Tokyo', 'what time is it in moscow tokyo')).toEqual({
      right: 6,
      total: 6,
      errors: 1,
    });
    expect(wordScore('what time is it in Paris', 'what time is it in cairo')).toMatchObject({ right: 5, errors: 1 });
    expect(wordScore('is it raining in Rome', '')).toMatchObject({ right: 0, total: 5, errors: 5 });
  });

  it('draws the same request set from the same seed, covering every held-out voice', () => {
    const a = buildRequests('11');
    expect(a).toEqual(buildRequests('11'));
    expect(a).not.toEqual(buildRequests('12'));
    expect(new Set(a.map((r) => `${r.speaker.engine}:${r.speaker.voice}`)).size).toBe(SPEAKERS.length);
    expect(SPEAKERS.some((s) => s.engine === 'flite')).toBe(true);
  });
});

describe('spoken delegation routing', () => {
  it('keeps "tomorrow" from the words to the weather function', async () => {
    const intent = understandRequest("what's the weather in paris tomorrow");
    const query = /<delegate>(.*)<\/delegate>/.exec(replyTo(intent as RequestIntent))?.[1];
    expect(query).toBe('What is the weather in Paris tomorrow?');
    const routed = await new Harness().route(query!);
    expect(routed.plan).toEqual({ functionName: 'weather', args: { city: 'Paris', when: 'tomorrow' } });
    expect(routed.answered).toBe(true);
  });
});

describe('spoken delegation end to end', () => {
  it('routes a clearly spoken eSpeak request to the right function, and reports well-formed figures', async () => {
    const speaker = { engine: 'espeak' as const, voice: 'en-us' };
    const requests: SpokenRequest[] = [
      {
        id: 'espeak:en-us:weather',
        topic: 'weather',
        text: 'What is the weather in Berlin?',
        speaker,
        levelDb: -26,
        expected: { functionName: 'weather', args: { city: 'Berlin', when: 'now' } },
      },
      {
        id: 'espeak:en-us:time',
        topic: 'time',
        text: 'What time is it in Tokyo?',
        speaker,
        levelDb: -24,
        expected: { functionName: 'world_clock', args: { city: 'Tokyo', ask: 'time' } },
      },
    ];
    const run = await evaluateSpokenDelegation({ seed: 'test', requests, bands: ['clean'] });
    expect(run.trials.map((t) => t.id)).toEqual(['espeak:en-us:weather:clean', 'espeak:en-us:time:clean']);
    const weather = run.trials[0]!;
    expect(weather.transcript).toMatch(/weather in berlin/);
    expect(weather.query).toMatch(/weather in Berlin/);
    expect(weather.plan).toEqual({ functionName: 'weather', args: { city: 'Berlin', when: 'now' } });
    expect(weather.verdict).toBe('right');
    expect(weather.answered).toBe(true);
    for (const t of run.trials) {
      expect(t.words.total).toBe(t.text.split(' ').length);
      expect(t.words.right).toBeLessThanOrEqual(t.words.total);
    }

    const score = scoreGroup(run.trials);
    expect(score.n).toBe(2);
    expect(Object.values(score.counts).reduce((a, b) => a + b, 0)).toBe(2);
    const matrix = confusion(run.trials);
    expect(matrix.rows).toEqual(['weather', 'world_clock']);
    expect(matrix.columns.at(-1)).toBe(NO_DELEGATION);
    expect(matrix.cells.flat().reduce((a, b) => a + b, 0)).toBe(2);

    const report = renderReport(run, 'Causes go here.');
    expect(report).toMatch(/^# Spoken requests delegated/);
    expect(report).toContain('Seed `test`');
    expect(report).toMatch(/\| weather \| 1 \|/);
    expect(report).toContain('## Why requests fail\n\nCauses go here.');
    expect(report).toContain('npm run eval:delegation-spoken -- --seed test');
  }, 120_000);
});
