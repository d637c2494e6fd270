import { SessionConfigSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { encodeMulaw } from '../audio/g711.ts';
import { FakeClock } from '../testing/fake-clock.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { type CallMedia, CallSession } from './call-session.ts';

const config = SessionConfigSchema.parse({ instructions: 'You answer the phone.', voice: 'en-gb' });

/** A FAKE transport leg: records what the call core asks of it; `withMarks: false` plays an RTP leg. */
function fakeLeg(withMarks: boolean) {
  const leg = {
    frames: [] as Uint8Array[],
    marks: [] as string[],
    log: [] as string[],
    hungUp: undefined as string | undefined,
  };
  const media: CallMedia = {
    sendAudio: (frame) => {
      leg.frames.push(frame);
      leg.log.push('media');
    },
    clear: () => leg.log.push('clear'),
    hangUp: (reason) => {
      leg.hungUp = reason;
    },
    ...(withMarks
      ? {
          sendMark: (name: string) => {
            leg.marks.push(name);
            leg.log.push(`mark:${name}`);
          },
        }
      : {}),
  };
  return { leg, media };
}

function setup(withMarks = true) {
  const link = new FakeWorkerLink();
  const clock = new FakeClock();
  const { leg, media } = fakeLeg(withMarks);
  const call = new CallSession({ link, media, tenant: 'acme', config, law: 'pcmu', clock, sessionId: 'sess_call' });
  call.start();
  const speak = (utteranceId: string, seq: number, startMs: number, durationMs: number) => {
    const pcm = Int16Array.from({ length: durationMs * 24 }, (_, i) => Math.round(8000 * Math.sin(i / 10)));
    link.pushAudioSamples('sess_call', { utteranceId, audioChunkSeq: seq }, pcm);
    link.pushTimeline('sess_call', {
      stream: 'assistant',
      type: 'assistant.audio',
      data: {
        utteranceId,
        audioChunkSeq: seq,
        audio: { store: 'memory', key: `${utteranceId}/${seq}` },
        startMs,
        durationMs,
      },
    } as never);
  };
  const utterance = (utteranceId: string, phase: 'started' | 'finished') =>
    link.pushTimeline('sess_call', {
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId, phase, ...(phase === 'finished' ? { reason: 'completed' as const } : {}) },
    });
  const interruption = (action: 'continue' | 'discard', cause: 'backchannel' | 'interruption', utteranceId: string) =>
    link.pushTimeline('sess_call', {
      stream: 'assistant',
      type: 'assistant.interruption',
      data: { action, cause, utteranceId, heardMs: 0, heardText: '', cancelledWork: [] },
    });
  return { link, clock, leg, call, speak, utterance, interruption };
}

describe('CallSession', () => {
  it('opens a session for the tenant and assistant the transport chose', () => {
    const { link } = setup();
    expect(link.framesOf('open')).toEqual([{ kind: 'open', session: 'sess_call', tenant: 'acme', config }]);
  });

  it("relays the caller's μ-law as 16 kHz audio and DTMF keys as dtmf frames", () => {
    const { link, call } = setup();
    const tone = Int16Array.from({ length: 160 }, (_, i) => Math.round(6000 * Math.sin(i / 3)));
    for (let i = 0; i < 5; i++) expect(call.receiveAudio(encodeMulaw(tone))).toBeUndefined();
    const samples = link.framesOf('audio').reduce((n, f) => n + f.pcm16k.byteLength / 2, 0);
    expect(samples).toBe(5 * 320); // 100 ms at 16 kHz
    expect(call.receiveDtmf('5')).toBeUndefined();
    expect(call.receiveDtmf('#')).toBeUndefined();
    expect(link.framesOf('dtmf').map((f) => f.digit)).toEqual(['5', '#']);
    expect(call.receiveDtmf('55')).toMatchObject({ code: 'invalid_event' });
    expect(link.framesOf('dtmf').length).toBe(2);
  });

  it('paces the reply as 20 ms frames with marks, and acknowledges playback as the marks come back', () => {
    const { link, clock, leg, call, speak, utterance } = setup();
    utterance('u1', 'started');
    speak('u1', 0, 0, 500);
    speak('u1', 1, 500, 130);
    utterance('u1', 'finished');
    clock.advance(2000, 10);
    expect(leg.frames.length).toBe(32); // 630 ms: 31 whole frames and one padded
    expect(leg.frames.every((f) => f.length === 160)).toBe(true);
    expect(link.framesOf('playback_ack')).toEqual([]); // nothing heard until the far end says so
    for (const name of leg.marks) call.markPlayed(name);
    const acks = link.framesOf('playback_ack').map((a) => [a.utteranceId, a.playedMs, a.source]);
    expect(acks).toEqual([
      ['u1', 240, 'client'],
      ['u1', 480, 'client'],
      ['u1', 500, 'client'],
      ['u1', 630, 'client'],
    ]);
    // Each chunk's mark follows its audio: the last mark comes after the last frame.
    expect(leg.log.at(-1)).toMatch(/^mark:/);
    expect(leg.log.at(-2)).toBe('media');
    // An echo of a mark never sent, or sent twice, changes nothing.
    call.markPlayed(leg.marks[0]!);
    call.markPlayed('m999');
    expect(link.framesOf('playback_ack').length).toBe(4);
  });

  it('clears when the runtime gives the caller the floor, and sends nothing already queued', () => {
    const { link, clock, leg, call, speak, utterance, interruption } = setup();
    utterance('u1', 'started');
    speak('u1', 0, 0, 1000);
    clock.advance(300, 10);
    const sent = leg.frames.length;
    const marksBefore = [...leg.marks];
    interruption('discard', 'interruption', 'u1');
    expect(leg.log.at(-1)).toBe('clear');
    speak('u1', 1, 1000, 1000); // in flight when the decision was taken
    clock.advance(3000, 10);
    expect(leg.frames.length).toBe(sent);
    expect(call.stats.clears).toBe(1);
    // The far end echoes the marks it dropped: they were never heard, so nothing is acknowledged.
    for (const name of marksBefore) call.markPlayed(name);
    expect(link.framesOf('playback_ack')).toEqual([]);
  });

  it('talks through a backchannel: no clear, the audio goes on', () => {
    const { clock, leg, speak, utterance, interruption } = setup();
    utterance('u1', 'started');
    speak('u1', 0, 0, 1000);
    clock.advance(300, 10);
    interruption('continue', 'backchannel', 'u1');
    clock.advance(1000, 10);
    expect(leg.log).not.toContain('clear');
    expect(leg.frames.length).toBe(50);
  });

  it('without marks, audio counts as heard once it is sent', () => {
    const { link, clock, leg, speak, utterance } = setup(false);
    utterance('u1', 'started');
    speak('u1', 0, 0, 300);
    utterance('u1', 'finished');
    expect(link.framesOf('playback_ack')).toEqual([]);
    clock.advance(1000, 10);
    expect(leg.frames.length).toBe(15);
    expect(link.framesOf('playback_ack').map((a) => a.playedMs)).toEqual([240, 300]);
  });

  it('hangs up when the worker ends the session, and closes it when the caller hangs up', () => {
    const first = setup();
    first.link.push({ kind: 'closed', session: 'sess_call', reason: 'worker draining' });
    expect(first.leg.hungUp).toBe('worker draining');
    expect(first.call.closed).toBe(true);
    const second = setup();
    second.call.hangUp('caller hung up');
    expect(second.link.framesOf('close')).toEqual([{ kind: 'close', session: 'sess_call', reason: 'caller hung up' }]);
    expect(second.link.listenerCount('sess_call')).toBe(0);
  });
});
