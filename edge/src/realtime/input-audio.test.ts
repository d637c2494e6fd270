import type { EdgeToWorkerFrame } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { encodeBase64 } from '../audio/base64.ts';
import type { AudioAdmission, SessionHooks } from '../tenancy/session-hooks.ts';
import { InputAudio } from './input-audio.ts';
import type { ProtocolError } from './protocol-error.ts';

type AudioFrame = Extract<EdgeToWorkerFrame, { kind: 'audio' }>;

/** A fake tenant budget: admits `budgetMs` of audio, then refuses with an error. */
function setup(budgetMs = Number.POSITIVE_INFINITY) {
  const frames: AudioFrame[] = [];
  let admittedMs = 0;
  const hooks: SessionHooks = {
    admitAudioIn(ms): AudioAdmission {
      if (admittedMs + ms > budgetMs) return { ok: false, error: { code: 'rate_limited', message: 'over budget' } };
      admittedMs += ms;
      return { ok: true };
    },
    observe: () => {},
    ended: () => {},
  };
  const input = new InputAudio({ session: 'sess_1', hooks, send: (frame) => frames.push(frame) });
  return { input, frames, admitted: () => admittedMs };
}

const pcm24k = Int16Array.from({ length: 480 }, (_, i) => Math.round(3000 * Math.sin(i / 5)));
const base64 = encodeBase64(new Uint8Array(pcm24k.buffer));
const plain = (audio: string) => `{"type":"input_audio_buffer.append","audio":"${audio}"}`;

describe('InputAudio', () => {
  it('gives the model the same 16 kHz frames whether audio came as base64, as a plain append or as samples', () => {
    const parsed = setup();
    const fast = setup();
    const typed = setup();
    for (let i = 0; i < 3; i++) {
      expect(parsed.input.appendBase64(base64)).toBeUndefined();
      expect(fast.input.plainAppend(plain(base64), () => {})).toBe(true);
      expect(typed.input.appendPcm24k(pcm24k)).toBeUndefined();
    }
    const bytes = (frames: AudioFrame[]) => frames.map((f) => [...f.pcm16k]);
    expect(parsed.frames).toHaveLength(3);
    expect(parsed.frames[0]!.pcm16k.length).toBe(640); // 320 samples
    expect(bytes(fast.frames)).toEqual(bytes(parsed.frames));
    expect(bytes(typed.frames)).toEqual(bytes(parsed.frames));
    expect(typed.admitted()).toBe(60);
  });

  it('leaves anything but a well-formed plain append to the parser, having admitted nothing', () => {
    const { input, frames, admitted } = setup();
    const refused: ProtocolError[] = [];
    for (const text of [
      `{"event_id":"e1","type":"input_audio_buffer.append","audio":"${base64}"}`,
      plain(`${base64.slice(0, 10)}\\n${base64.slice(10)}`),
      plain('not base64!'),
      plain('QUJD'), // three bytes: not whole pcm16 samples
      '{"type":"input_audio_buffer.append","audio":"}',
      '{"type":"input_audio_buffer.commit"}',
    ]) {
      expect(
        input.plainAppend(text, (error) => refused.push(error)),
        text,
      ).toBe(false);
    }
    expect(frames).toEqual([]);
    expect(refused).toEqual([]);
    expect(admitted()).toBe(0);
  });

  it('admits typed samples against the same budget as appends, and refuses past it with its error', () => {
    const { input, frames } = setup(40);
    expect(input.appendBase64(base64)).toBeUndefined();
    expect(input.appendPcm24k(pcm24k)).toBeUndefined();
    expect(input.appendPcm24k(pcm24k)?.code).toBe('rate_limited');
    const refused: ProtocolError[] = [];
    expect(input.plainAppend(plain(base64), (error) => refused.push(error))).toBe(true);
    expect(refused.map((e) => e.code)).toEqual(['rate_limited']);
    expect(frames).toHaveLength(2);
  });

  it('resamples typed 24 kHz samples while the declared input format is G.711', () => {
    const { input, frames } = setup();
    input.setFormat('g711_ulaw');
    expect(input.appendPcm24k(pcm24k)).toBeUndefined();
    expect(frames[0]!.pcm16k.length).toBe(640);
    expect(input.appendBase64(encodeBase64(new Uint8Array(160)))).toBeUndefined(); // 20 ms of 8 kHz mu-law
    expect(frames[1]!.pcm16k.length).toBe(640);
  });
});
