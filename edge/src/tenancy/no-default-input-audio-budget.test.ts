// Regression: there was no default input-audio budget. 200 appends of 10 s of audio each, sent as
// fast as possible, were all relayed (+83 MB held after close, another session at 160 ms chunks
// missed 53 deadlines) and no `rate_limited` error came back. Each session now has a budget of real
// time plus a burst, checked at the edge before the audio is resampled or relayed; audio over it
// is dropped with one `rate_limited` error carrying the client's event_id, and the session lives on.
// Time is a FAKE clock the test moves: the counts below are exact on any machine.
import { DEFAULT_INPUT_AUDIO_BUDGET, type InputAudioBudget, pcmToBase64 } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { FakeClock } from '../testing/fake-clock.ts';
import { FakeTransport } from '../testing/fake-transport.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { createTenancy } from './tenancy.ts';
import { tenancyFromEnv } from './tenancy-from-env.ts';

/** `ms` of 24 kHz pcm16, as an append carries it. */
const audio = (ms: number) => pcmToBase64(new Int16Array(ms * 24).fill(800));

function session(inputAudio?: InputAudioBudget) {
  const clock = new FakeClock();
  const link = new FakeWorkerLink();
  const transport = new FakeTransport();
  const tenancy = createTenancy({ now: () => clock.now(), ...(inputAudio ? { inputAudio } : {}) });
  const edge = createEdgeApp({ link, tenancy, clock, newSessionId: () => 'sess_budget' });
  const connection = edge.openRealtime(transport, 'default');
  const append = (eventId: string, base64: string) =>
    connection.handleMessage(JSON.stringify({ type: 'input_audio_buffer.append', event_id: eventId, audio: base64 }));
  /** Audio the worker was sent, in ms of 16 kHz pcm16. */
  const relayedMs = () => link.framesOf('audio').reduce((sum, frame) => sum + frame.pcm16k.byteLength / 32, 0);
  const rateLimited = () =>
    transport.ofType('error').filter((event) => (event.error as { code: string }).code === 'rate_limited');
  return { clock, transport, append, relayedMs, rateLimited };
}

describe('no default input audio budget', () => {
  it('relays a flood only up to the burst, answers rate_limited with the event id, and keeps the session', () => {
    const s = session();
    const tenSeconds = audio(10_000);
    for (let i = 1; i <= 40; i++) s.append(`evt_${i}`, tenSeconds);
    // The default burst is one largest append: the first goes through, the other 39 are dropped.
    expect(DEFAULT_INPUT_AUDIO_BUDGET).toEqual({ rate: 1, burstMs: 10_000 });
    expect(s.relayedMs()).toBeGreaterThan(9_900); // the resampler holds back a few samples
    expect(s.relayedMs()).toBeLessThanOrEqual(10_000);
    // One error per run of refused appends, naming the first refused event.
    const errors = s.rateLimited();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toMatchObject({ code: 'rate_limited', event_id: 'evt_2' });
    expect(s.transport.closedWith).toBeUndefined();

    // The budget refills at real time: 3 s later, 3 s of audio pass and the 4th second does not.
    s.clock.advance(3_000);
    const before = s.relayedMs();
    for (let i = 1; i <= 4; i++) s.append(`later_${i}`, audio(1_000));
    expect(s.relayedMs() - before).toBeGreaterThan(2_990);
    expect(s.relayedMs() - before).toBeLessThanOrEqual(3_000);
    expect(s.rateLimited().map((event) => (event.error as { event_id: string }).event_id)).toEqual([
      'evt_2',
      'later_4',
    ]);
  });

  it('never limits a client that streams in real time', () => {
    const s = session();
    const frame = audio(100);
    for (let i = 0; i < 600; i++) {
      s.append(`mic_${i}`, frame);
      s.clock.advance(100);
    }
    expect(s.rateLimited()).toEqual([]);
    expect(s.relayedMs()).toBeGreaterThan(59_900);
  });

  it('takes its rate and burst from VENUS_INPUT_AUDIO_RATE and VENUS_INPUT_AUDIO_BURST_MS', () => {
    const budget = tenancyFromEnv({ VENUS_INPUT_AUDIO_RATE: '2', VENUS_INPUT_AUDIO_BURST_MS: '500' }).inputAudio;
    expect(budget).toEqual({ rate: 2, burstMs: 500 });
    const s = session(budget);
    s.append('a', audio(500));
    s.append('b', audio(100));
    expect(s.rateLimited()).toHaveLength(1);
    s.clock.advance(50); // twice real time: 50 ms refill 100 ms of audio
    s.append('c', audio(100));
    expect(s.rateLimited()).toHaveLength(1);
    expect(s.relayedMs()).toBeGreaterThan(590);
  });
});
