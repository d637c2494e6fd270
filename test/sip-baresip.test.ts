import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Baresip } from './support/baresip.ts';
import { BridgeUnderTest } from './support/sip-bridge-process.ts';

/**
 * A real baresip (the user agent a reader would use) calls the SIP bridge, driven over ctrl_tcp:
 * dial, its audio source plays a spoken request from a WAV, it records what it hears, sends a DTMF
 * digit (RFC 4733) and hangs up. The session's stored timeline shows the call, the caller's speech
 * as the model's recogniser heard it, the assistant's reply, the digit and the end; the recording
 * holds the reply as speech.
 */
const REQUEST = 'What is the weather in Berlin?';

let bridge: BridgeUnderTest;
let baresip: Baresip | undefined;

beforeAll(async () => {
  bridge = await BridgeUnderTest.start({ routes: [{ number: '1000', tenant: 'default' }] });
});

afterAll(async () => {
  await baresip?.quit();
  await bridge?.close();
});

/** Per 20 ms frame of a 16-bit mono WAV: its RMS (sox makes raw samples of any WAV it reads). */
function frameRms(wav: string): number[] {
  const raw = execFileSync('sox', [wav, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', '-']);
  const samples = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const frames: number[] = [];
  for (let at = 0; at + 160 <= samples.length; at += 160) {
    let sum = 0;
    for (let i = at; i < at + 160; i++) sum += samples[i]! ** 2;
    frames.push(Math.sqrt(sum / 160));
  }
  return frames;
}

const ofType = <T extends TimelineEvent['type']>(events: TimelineEvent[], type: T) =>
  events.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === type);

describe('baresip over ctrl_tcp against the SIP bridge', () => {
  it('dial, a spoken request from a WAV, the reply heard and recorded, a DTMF digit, hang up: all on the timeline', {
    timeout: 300_000,
  }, async () => {
    // The caller's audio: eSpeak NG says the request, 8 kHz 16-bit mono (all aufile takes), with
    // silence after it so the source does not run out (baresip hangs up when it does) before we do.
    const spoken = path.join(bridge.dir, 'spoken.wav');
    const source = path.join(bridge.dir, 'request-8k.wav');
    execFileSync('espeak-ng', ['-v', 'en-us', '-w', spoken, REQUEST]);
    // -D: no dither, so the caller's audio is the same bytes every run (test/support/speech-clip.ts).
    execFileSync('sox', ['-D', spoken, '-r', '8000', '-c', '1', '-b', '16', source, 'pad', '0.5', '240']);
    baresip = await Baresip.start(bridge.dir, source);

    await baresip.command('dial', `sip:1000@${bridge.target}`);
    await baresip.waitEvent('CALL_ESTABLISHED');
    const [session] = bridge.sessionsFor('1000');
    expect(session).toBeDefined();

    // The request is heard by the model's own recogniser and answered; the answer is spoken.
    let events = await bridge.waitTimeline(
      session!,
      'the request heard and a spoken answer',
      (e) =>
        ofType(e, 'user.transcript').some((t) => /weather in berlin/i.test(t.data.text)) &&
        ofType(e, 'assistant.utterance').some((u) => u.data.phase === 'finished'),
    );
    const answered = ofType(events, 'assistant.utterance').find((u) => u.data.phase === 'finished')!;
    const answerMs = ofType(events, 'assistant.audio')
      .filter((a) => a.data.utteranceId === answered.data.utteranceId)
      .reduce((ms, a) => ms + a.data.durationMs, 0);
    // What went out as RTP counts as heard: wait until the whole answer was acknowledged as played.
    events = await bridge.waitTimeline(session!, 'the answer played to the caller', (e) =>
      ofType(e, 'playback.ack').some(
        (a) => a.data.utteranceId === answered.data.utteranceId && a.data.playedMs >= answerMs - 20,
      ),
    );

    await baresip.command('sndcode', '5');
    events = await bridge.waitTimeline(session!, 'the digit', (e) => ofType(e, 'user.dtmf').length > 0);
    expect(ofType(events, 'user.dtmf').map((d) => d.data.digit)).toEqual(['5']);

    await baresip.command('hangup');
    await baresip.waitEvent('CALL_CLOSED');
    events = await bridge.closedTimeline(session!);
    await baresip.quit();

    // The timeline, in order: the call opened, the caller spoke, the assistant answered, the digit, the end.
    const first = (type: TimelineEvent['type']) => events.find((e) => e.type === type)?.seq ?? -1;
    const order = [
      first('session.config'),
      first('user.audio'),
      ofType(events, 'user.transcript').find((t) => /weather in berlin/i.test(t.data.text))!.seq,
      answered.seq,
      first('user.dtmf'),
      first('session.closed'),
    ];
    expect(order.every((seq) => seq >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(events.find((e) => e.type === 'session.config')).toMatchObject({ data: { tenant: 'default' } });
    expect(ofType(events, 'user.speech').map((s) => s.data.state)).toContain('stopped');
    expect(answerMs).toBeGreaterThan(300);

    // What baresip heard is speech of plausible length, not silence: loud frames for much of the answer.
    const heard = frameRms(baresip.heardWav());
    const voicedMs = heard.filter((rms) => rms > 300).length * 20;
    expect(voicedMs).toBeGreaterThan(Math.min(500, answerMs * 0.3));
    expect(voicedMs).toBeLessThanOrEqual(
      ofType(events, 'assistant.audio').reduce((ms, a) => ms + a.data.durationMs, 0) + 200,
    );
    console.log(
      `baresip call: answer ${answerMs} ms spoken, ${heard.length * 20} ms recorded by baresip, ${voicedMs} ms of it voiced; ` +
        `transcript "${ofType(events, 'user.transcript')[0]?.data.text}"`,
    );
  });
});
