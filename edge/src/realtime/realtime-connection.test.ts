import { AUDIO, pcmToBase64, type TimelineDraft } from '@venus/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { decodeMulaw, encodeMulaw } from '../audio/g711.ts';
import { FakeTransport } from '../testing/fake-transport.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import type { Clock } from './clock.ts';

const SESSION = 'sess_test';
const fakeClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function setup() {
  const link = new FakeWorkerLink();
  const transport = new FakeTransport();
  const edge = createEdgeApp({ link, newSessionId: () => SESSION, clock: fakeClock });
  const connection = edge.openRealtime(transport, 'default');
  const send = (event: object) => connection.handleMessage(JSON.stringify(event));
  const push = (draft: TimelineDraft, atMs?: number) => {
    // The host sends an audio chunk's samples right before its event.
    if (draft.type === 'assistant.audio') link.pushAudioSamples(SESSION, draft.data, PCM_20MS);
    return link.pushTimeline(SESSION, draft, atMs);
  };
  return { link, transport, connection, send, push };
}

/** 20 ms of 24 kHz pcm16, and as base64. */
const PCM_20MS = new Int16Array(480).fill(1000);
const AUDIO_20MS = pcmToBase64(PCM_20MS);

const utterance = (
  utteranceId: string,
  phase: 'started' | 'finished',
  reason?: 'completed' | 'discarded',
): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.utterance',
  data: { utteranceId, phase, ...(reason ? { reason } : {}) },
});
const assistantAudio = (utteranceId: string, audioChunkSeq: number, durationMs = 20): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.audio',
  data: {
    utteranceId,
    audioChunkSeq,
    audio: { segmentId: `a:${audioChunkSeq}`, track: 'assistant', offsetMs: 0, durationMs, sampleRateHz: 24_000 },
    startMs: audioChunkSeq * durationMs,
    durationMs,
  },
});
const assistantText = (utteranceId: string, delta: string): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.text',
  data: { utteranceId, delta },
});
const speech = (state: 'started' | 'stopped'): TimelineDraft => ({
  stream: 'user',
  type: 'user.speech',
  data: { state, probability: 0.9 },
});
const interruption = (action: 'continue' | 'discard', utteranceId: string | null): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.interruption',
  data: {
    action,
    cause: action === 'continue' ? 'backchannel' : 'interruption',
    utteranceId,
    heardMs: 40,
    heardText: 'Hel',
    cancelledWork: [],
  },
});

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RealtimeConnection: opening', () => {
  it('opens the worker session with the default config and greets the client', () => {
    const { link, transport } = setup();
    expect(link.frames[0]).toEqual({
      kind: 'open',
      session: SESSION,
      tenant: 'default',
      config: { chunkMs: 1000, deliveryPolicy: 'when_idle', voice: 'en-us' },
    });
    const created = transport.ofType('session.created')[0]!;
    expect(created.event_id).toMatch(/^event_/);
    expect(created.session).toMatchObject({ id: SESSION, input_audio_format: 'pcm16', venus: { chunk_ms: 1000 } });
    expect(link.listenerCount(SESSION)).toBe(1);
  });

  it('names sessions sess_<random> by default', () => {
    const link = new FakeWorkerLink();
    const connection = createEdgeApp({ link }).openRealtime(new FakeTransport(), 'default');
    expect(connection.sessionId).toMatch(/^sess_[0-9a-f]{24}$/);
  });
});

describe('RealtimeConnection: bad input is answered and the connection lives on', () => {
  const tooLarge = 'A'.repeat(Math.ceil((AUDIO.maxAppendBytes + 3) / 3) * 4);
  const cases: [string, string | ArrayBuffer, string, string | undefined][] = [
    ['not JSON', '{"type":', 'invalid_json', undefined],
    ['a JSON array', '[1,2]', 'invalid_event', undefined],
    [
      'another session',
      JSON.stringify({ type: 'input_audio_buffer.commit', session_id: 'sess_other' }),
      'wrong_session',
      'session_id',
    ],
    ['no type', JSON.stringify({ event_id: 'e1' }), 'invalid_event', 'type'],
    ['an unknown type', JSON.stringify({ type: 'bogus.event' }), 'unknown_event_type', undefined],
    [
      'an unsupported type',
      JSON.stringify({ type: 'transcription_session.update', session: {} }),
      'unsupported_feature',
      undefined,
    ],
    [
      'a missing field',
      JSON.stringify({ type: 'conversation.item.truncate', item_id: 'x' }),
      'invalid_event',
      'audio_end_ms',
    ],
    [
      'an out-of-range chunk',
      JSON.stringify({ type: 'session.update', session: { venus: { chunk_ms: 5 } } }),
      'invalid_event',
      'session.venus.chunk_ms',
    ],
    [
      'pcm16 at 16 kHz',
      JSON.stringify({ type: 'session.update', session: { input_audio_format: { type: 'pcm16', rate: 16000 } } }),
      'audio_wrong_format',
      'session.input_audio_format.rate',
    ],
    [
      'G.711 at 16 kHz (GA)',
      JSON.stringify({
        type: 'session.update',
        session: { audio: { output: { format: { type: 'audio/pcmu', rate: 16000 } } } },
      }),
      'audio_wrong_format',
      'session.audio.output.format.rate',
    ],
    [
      'an empty voice',
      JSON.stringify({ type: 'session.update', session: { voice: '' } }),
      'invalid_event',
      'session.voice',
    ],
    [
      'invalid base64',
      JSON.stringify({ type: 'input_audio_buffer.append', audio: '!!!!' }),
      'audio_wrong_format',
      'audio',
    ],
    [
      'an odd pcm16 byte count',
      JSON.stringify({ type: 'input_audio_buffer.append', audio: 'AAAA' }),
      'audio_wrong_format',
      'audio',
    ],
    [
      'an oversized append',
      JSON.stringify({ type: 'input_audio_buffer.append', audio: tooLarge }),
      'audio_too_large',
      'audio',
    ],
    [
      'truncating an unknown item',
      JSON.stringify({ type: 'conversation.item.truncate', item_id: 'utt_x', content_index: 0, audio_end_ms: 0 }),
      'wrong_session',
      'item_id',
    ],
    [
      'acking an unknown item',
      JSON.stringify({ type: 'venus.playback.ack', item_id: 'utt_x', played_ms: 10 }),
      'wrong_session',
      'item_id',
    ],
    [
      'an audio item without a transcript',
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: 'AAAA' }] },
      }),
      'unsupported_feature',
      'item.content.0.transcript',
    ],
    [
      'an empty message',
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: ' ' }] },
      }),
      'invalid_event',
      'item.content',
    ],
    ['a binary message', new Uint8Array([1, 2, 3]).buffer, 'invalid_event', undefined],
  ];

  it.each(cases)('%s', (_name, message, code, param) => {
    const { link, transport, connection, send } = setup();
    transport.drain();
    const framesBefore = link.frames.length;
    connection.handleMessage(message);
    expect(transport.sent).toHaveLength(1);
    const error = transport.sent[0]!;
    expect(error.type).toBe('error');
    expect(error.error).toMatchObject({ type: 'invalid_request_error', code });
    if (param === undefined) expect(error.error).not.toHaveProperty('param');
    else expect(error.error).toHaveProperty('param', param);
    expect(link.frames).toHaveLength(framesBefore);

    send({ type: 'venus.work.cancel', work_id: 'work_1' });
    expect(link.frames[link.frames.length - 1]).toEqual({ kind: 'cancel_work', session: SESSION, workId: 'work_1' });
    expect(transport.closedWith).toBeUndefined();
  });

  it('echoes the offending event id and names the unknown type', () => {
    const { transport, send } = setup();
    send({ type: 'response.teleport', event_id: 'evt_42' });
    expect(transport.last().error).toMatchObject({ code: 'unknown_event_type', event_id: 'evt_42' });
    expect((transport.last().error as { message: string }).message).toContain('response.teleport');
  });

  it('refuses to truncate a user item', () => {
    const { transport, send } = setup();
    send({
      type: 'conversation.item.create',
      item: { id: 'item_u1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    });
    send({ type: 'conversation.item.truncate', item_id: 'item_u1', content_index: 0, audio_end_ms: 0 });
    expect(transport.last().error).toMatchObject({ code: 'invalid_event', param: 'item_id' });
  });

  it('refuses a truncation past the audio sent', () => {
    const { transport, send, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    send({ type: 'conversation.item.truncate', item_id: 'utt_1', content_index: 0, audio_end_ms: 500 });
    expect(transport.last().error).toMatchObject({ code: 'invalid_event', param: 'audio_end_ms' });
  });
});

describe('RealtimeConnection: client events become frames', () => {
  it('session.update maps voice, instructions, chunk size and delivery policy', () => {
    const { link, transport, send } = setup();
    send({
      type: 'session.update',
      session: { voice: 'en-gb', instructions: 'Be brief.', venus: { chunk_ms: 160, delivery_policy: 'interrupt' } },
    });
    expect(link.frames[link.frames.length - 1]).toEqual({
      kind: 'config',
      session: SESSION,
      config: { chunkMs: 160, deliveryPolicy: 'interrupt', voice: 'en-gb', instructions: 'Be brief.' },
    });
    expect(transport.last().session).toMatchObject({
      voice: 'en-gb',
      venus: { chunk_ms: 160, delivery_policy: 'interrupt' },
    });
  });

  it('session.update maps VAD tuning with a field_approximate notice naming the fields, not an error', () => {
    const { transport, send } = setup();
    transport.drain();
    send({ type: 'session.update', session: { turn_detection: { type: 'server_vad', silence_duration_ms: 200 } } });
    expect(transport.types()).toEqual(['session.updated', 'venus.notice']);
    expect(transport.last()).toMatchObject({
      code: 'field_approximate',
      fields: [{ param: 'session.turn_detection.silence_duration_ms' }],
    });
  });

  it('appends 24 kHz pcm16 as 16 kHz pcm', () => {
    const { link, send } = setup();
    send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS });
    const [audio] = link.framesOf('audio');
    expect(audio?.pcm16k.byteLength).toBe(320 * 2);
  });

  it('appends 8 kHz μ-law as 16 kHz pcm', () => {
    const { link, send } = setup();
    send({ type: 'session.update', session: { audio: { input: { format: { type: 'audio/pcmu' } } } } });
    const mulaw = encodeMulaw(new Int16Array(160).fill(2000));
    send({ type: 'input_audio_buffer.append', audio: Buffer.from(mulaw).toString('base64') });
    const [audio] = link.framesOf('audio');
    expect(audio?.pcm16k.byteLength).toBe(320 * 2);
  });

  it('commit and clear are acknowledged without frames (the runtime detects turns itself)', () => {
    const { link, transport, send } = setup();
    const frames = link.frames.length;
    transport.drain();
    send({ type: 'input_audio_buffer.commit' });
    send({ type: 'input_audio_buffer.clear' });
    expect(transport.types()).toEqual(['input_audio_buffer.committed', 'input_audio_buffer.cleared']);
    expect(link.frames).toHaveLength(frames);
  });

  it('user text becomes a text frame and a created item', () => {
    const { link, transport, send } = setup();
    transport.drain();
    send({
      type: 'conversation.item.create',
      item: {
        id: 'item_1',
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'What time is it?' }],
      },
    });
    expect(link.framesOf('text')).toEqual([
      { kind: 'text', session: SESSION, itemId: 'item_1', text: 'What time is it?' },
    ]);
    expect(transport.types()).toEqual([
      'conversation.item.created',
      'conversation.item.added',
      'conversation.item.done',
    ]);
    expect(transport.sent[0]!.item).toMatchObject({ id: 'item_1', role: 'user' });
  });

  it('response.create only earns a notice: the model is proactive', () => {
    const { link, transport, send } = setup();
    const frames = link.frames.length;
    transport.drain();
    send({ type: 'response.create' });
    expect(transport.types()).toEqual(['venus.notice']);
    expect(link.frames).toHaveLength(frames);
  });

  it('response.cancel and output_audio_buffer.clear cancel the response', () => {
    const { link, transport, send } = setup();
    send({ type: 'response.cancel' });
    send({ type: 'output_audio_buffer.clear' });
    expect(link.framesOf('cancel_response')).toHaveLength(2);
    expect(transport.last().type).toBe('output_audio_buffer.cleared');
  });

  it('a client cancel ends the response as client_cancelled', () => {
    const { transport, send, push } = setup();
    push(utterance('utt_1', 'started'));
    send({ type: 'response.cancel' });
    push(utterance('utt_1', 'finished', 'discarded'));
    expect(transport.ofType('response.done')[0]!.response).toMatchObject({
      status: 'cancelled',
      status_details: { reason: 'client_cancelled' },
    });
  });

  it('truncation acknowledges what was heard', () => {
    const { link, transport, send, push } = setup();
    push(utterance('utt_1', 'started'));
    for (let i = 0; i < 5; i++) push(assistantAudio('utt_1', i));
    send({ type: 'conversation.item.truncate', item_id: 'utt_1', content_index: 0, audio_end_ms: 60 });
    expect(link.framesOf('playback_ack').filter((f) => f.source === 'truncate')).toEqual([
      { kind: 'playback_ack', session: SESSION, utteranceId: 'utt_1', playedMs: 60, source: 'truncate' },
    ]);
    expect(transport.last()).toMatchObject({ type: 'conversation.item.truncated', item_id: 'utt_1', audio_end_ms: 60 });
  });

  it('work cancel becomes a cancel_work frame', () => {
    const { link, send } = setup();
    send({ type: 'venus.work.cancel', work_id: 'work_9' });
    expect(link.framesOf('cancel_work')).toEqual([{ kind: 'cancel_work', session: SESSION, workId: 'work_9' }]);
  });
});

describe('RealtimeConnection: playout', () => {
  it('estimates playback for a plain client and reports output_audio_buffer.stopped when it ends', () => {
    const { link, transport, push } = setup();
    push(utterance('utt_1', 'started'));
    for (let i = 0; i < 30; i++) push(assistantAudio('utt_1', i)); // 600 ms
    push(utterance('utt_1', 'finished', 'completed'));
    vi.advanceTimersByTime(250);
    const estimates = () => link.framesOf('playback_ack').filter((f) => f.source === 'estimate');
    expect(estimates().map((f) => f.playedMs)).toEqual([250]);
    expect(transport.ofType('output_audio_buffer.stopped')).toHaveLength(0);
    vi.advanceTimersByTime(350);
    expect(estimates().map((f) => f.playedMs)).toEqual([250, 500, 600]);
    const responseId = (transport.ofType('response.created')[0]!.response as { id: string }).id;
    expect(transport.ofType('output_audio_buffer.stopped')).toEqual([
      expect.objectContaining({ response_id: responseId }),
    ]);
  });

  it('an acknowledging client gets no estimates sent on its behalf', () => {
    const { link, send, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0, 500));
    send({ type: 'venus.playback.ack', item_id: 'utt_1', played_ms: 10 });
    vi.advanceTimersByTime(1000);
    const acks = link.framesOf('playback_ack');
    expect(acks.map((f) => f.source)).toEqual(['client']);
    expect(acks[0]).toMatchObject({ utteranceId: 'utt_1', playedMs: 10 });
  });
});

describe('RealtimeConnection: timeline becomes server events', () => {
  it('an utterance is one response with GA events and beta aliases', () => {
    const { transport, push } = setup();
    transport.drain();
    push(utterance('utt_1', 'started'));
    push(assistantText('utt_1', 'Hello'));
    push(assistantAudio('utt_1', 0));
    push(assistantAudio('utt_1', 1));
    push(utterance('utt_1', 'finished', 'completed'));
    const types = transport.types().filter((t) => t !== 'venus.timeline');
    expect(types).toEqual([
      'response.created',
      'response.output_item.added',
      'conversation.item.created',
      'conversation.item.added',
      'response.content_part.added',
      'response.output_audio_transcript.delta',
      'response.audio_transcript.delta',
      'output_audio_buffer.started',
      'response.output_audio.delta',
      'response.audio.delta',
      'response.output_audio.delta',
      'response.audio.delta',
      'response.output_audio_transcript.done',
      'response.audio_transcript.done',
      'response.output_audio.done',
      'response.audio.done',
      'response.content_part.done',
      'response.output_item.done',
      'conversation.item.done',
      'response.done',
    ]);
    const responseId = (transport.ofType('response.created')[0]!.response as { id: string }).id;
    for (const type of ['response.output_audio_transcript.delta', 'response.audio_transcript.delta']) {
      expect(transport.ofType(type)[0]).toMatchObject({
        response_id: responseId,
        item_id: 'utt_1',
        output_index: 0,
        content_index: 0,
        delta: 'Hello',
      });
    }
    expect(transport.ofType('response.output_audio.delta')[0]!.delta).toBe(AUDIO_20MS);
    expect(transport.ofType('response.output_item.added')[0]!.item).toMatchObject({ id: 'utt_1', role: 'assistant' });
    expect(transport.ofType('response.done')[0]!.response).toMatchObject({ id: responseId, status: 'completed' });
    expect(transport.ofType('response.output_audio_transcript.done')[0]!.transcript).toBe('Hello');
  });

  it('a GA client (session.type "realtime") gets no beta aliases: half the audio messages', () => {
    const { transport, send, push } = setup();
    send({ type: 'session.update', session: { type: 'realtime' } });
    transport.drain();
    push(utterance('utt_1', 'started'));
    push(assistantText('utt_1', 'Hello'));
    push(assistantAudio('utt_1', 0));
    push(utterance('utt_1', 'finished', 'completed'));
    const types = transport.types();
    expect(types).toContain('response.output_audio.delta');
    expect(types).toContain('response.output_audio_transcript.delta');
    expect(types.filter((t) => t.startsWith('response.audio'))).toEqual([]);
  });

  it('items chain in the order they enter the conversation, in GA names for a GA client', () => {
    const { transport, send, push } = setup();
    send({ type: 'session.update', session: { type: 'realtime' } });
    transport.drain();
    const userText = (id: string) => ({
      type: 'conversation.item.create',
      item: { id, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    });
    send(userText('item_1'));
    push(utterance('utt_1', 'started'));
    push(assistantText('utt_1', 'Hello'));
    push(assistantAudio('utt_1', 0));
    push(utterance('utt_1', 'finished', 'completed'));
    send(userText('item_2'));
    expect(transport.ofType('conversation.item.created')).toEqual([]);
    const added = transport.ofType('conversation.item.added');
    expect(added.map((e) => [(e.item as { id: string }).id, e.previous_item_id])).toEqual([
      ['item_1', null],
      ['utt_1', 'item_1'],
      ['item_2', 'utt_1'],
    ]);
    const done = transport.ofType('conversation.item.done');
    expect(done.map((e) => [(e.item as { id: string }).id, e.previous_item_id])).toEqual([
      ['item_1', null],
      ['utt_1', 'item_1'],
      ['item_2', 'utt_1'],
    ]);
    const output = (transport.ofType('response.done')[0]!.response as { output: unknown[] }).output;
    expect(output).toEqual([expect.objectContaining({ content: [{ type: 'output_audio', transcript: 'Hello' }] })]);
    expect(transport.ofType('response.content_part.added')[0]!.part).toEqual({ type: 'output_audio', transcript: '' });
    expect(added[0]!.item).toMatchObject({ content: [{ type: 'input_text', text: 'hi' }] });
  });

  it('a beta client gets beta content names and conversation.item.created', () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantText('utt_1', 'Hello'));
    push(utterance('utt_1', 'finished', 'completed'));
    expect(transport.ofType('conversation.item.created')).toHaveLength(1);
    const output = (transport.ofType('response.done')[0]!.response as { output: unknown[] }).output;
    expect(output).toEqual([expect.objectContaining({ content: [{ type: 'audio', transcript: 'Hello' }] })]);
  });

  it('conversation.item.retrieve answers the item as it stands; delete removes it from the chain', () => {
    const { transport, send, push } = setup();
    send({ type: 'session.update', session: { type: 'realtime' } });
    push(utterance('utt_1', 'started'));
    push(assistantText('utt_1', 'Hello'));
    send({ type: 'conversation.item.delete', item_id: 'utt_1', event_id: 'ev_busy' });
    expect(transport.ofType('error').at(-1)!.error).toMatchObject({ code: 'invalid_event', event_id: 'ev_busy' });
    push(utterance('utt_1', 'finished', 'completed'));
    transport.drain();
    send({ type: 'conversation.item.retrieve', item_id: 'utt_1' });
    expect(transport.ofType('conversation.item.retrieved')[0]!.item).toMatchObject({
      id: 'utt_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_audio', transcript: 'Hello' }],
    });
    send({ type: 'conversation.item.retrieve', item_id: 'nope', event_id: 'ev_1' });
    expect(transport.ofType('error')[0]!.error).toMatchObject({ code: 'wrong_session', param: 'item_id' });
    send({ type: 'conversation.item.delete', item_id: 'utt_1' });
    expect(transport.ofType('conversation.item.deleted')).toEqual([expect.objectContaining({ item_id: 'utt_1' })]);
    expect(transport.ofType('venus.notice').at(-1)).toMatchObject({ code: 'item_deleted_from_view' });
    send({
      type: 'conversation.item.create',
      item: { id: 'item_2', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    });
    expect(transport.ofType('conversation.item.added').at(-1)).toMatchObject({ previous_item_id: null });
    send({ type: 'conversation.item.retrieve', item_id: 'utt_1' });
    expect(transport.ofType('error').at(-1)!.error).toMatchObject({ code: 'wrong_session' });
  });

  it('an item placed anywhere but the end is refused: the model reads one append-only context', () => {
    const { link, transport, send } = setup();
    const create = (id: string, previous?: string) => ({
      type: 'conversation.item.create',
      ...(previous === undefined ? {} : { previous_item_id: previous }),
      item: { id, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    });
    send(create('item_1', 'root'));
    send(create('item_2', 'item_1'));
    send(create('item_3', 'item_1'));
    expect(transport.ofType('error').map((e) => e.error)).toEqual([
      expect.objectContaining({ code: 'unsupported_feature', param: 'previous_item_id' }),
    ]);
    expect(link.framesOf('text').map((f) => f.itemId)).toEqual(['item_1', 'item_2']);
  });

  it('sends audio as 8 kHz μ-law when the client asked for G.711', () => {
    const { transport, send, push } = setup();
    send({ type: 'session.update', session: { output_audio_format: 'g711_ulaw' } });
    push(utterance('utt_1', 'started'));
    for (let i = 0; i < 5; i++) push(assistantAudio('utt_1', i));
    const bytes = transport
      .ofType('response.audio.delta')
      .flatMap((event) => [...Buffer.from(event.delta as string, 'base64')]);
    expect(bytes.length).toBe(5 * 160);
    const decoded = decodeMulaw(Uint8Array.from(bytes));
    expect(Math.abs(decoded[decoded.length - 1]! - 1000)).toBeLessThan(64);
  });

  it('COMPATIBILITY TRAP: user speech during a response yields no speech_started', () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    transport.drain();
    push(speech('started'));
    expect(transport.types()).toEqual(['venus.timeline', 'venus.user.speech']);
    push(speech('stopped'));
    expect(transport.ofType('input_audio_buffer.speech_stopped')).toHaveLength(0);
  });

  it('COMPATIBILITY TRAP: no speech_started while the finished response is still playing out', () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    for (let i = 0; i < 25; i++) push(assistantAudio('utt_1', i)); // 500 ms
    push(utterance('utt_1', 'finished', 'completed'));
    vi.advanceTimersByTime(200);
    push(speech('started'));
    expect(transport.ofType('input_audio_buffer.speech_started')).toHaveLength(0);
  });

  it('an interruption that discards gives the OpenAI barge-in signals', () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    push(speech('started'), 500);
    transport.drain();
    push(interruption('discard', 'utt_1'), 600);
    push(assistantAudio('utt_1', 1)); // late audio of the cut-off turn is dropped
    push(utterance('utt_1', 'finished', 'discarded'));
    const types = transport.types().filter((t) => t !== 'venus.timeline');
    expect(types.slice(0, 3)).toEqual([
      'venus.interruption',
      'input_audio_buffer.speech_started',
      'output_audio_buffer.cleared',
    ]);
    expect(types).toContain('response.done');
    expect(types).not.toContain('response.output_audio.delta');
    expect(transport.ofType('response.done')).toHaveLength(1);
    expect(transport.ofType('response.done')[0]!.response).toMatchObject({
      status: 'cancelled',
      status_details: { type: 'cancelled', reason: 'turn_detected' },
    });
    expect(transport.ofType('input_audio_buffer.speech_started')[0]!.audio_start_ms).toBe(500);
    push(speech('stopped'), 900);
    expect(transport.ofType('input_audio_buffer.speech_stopped')[0]).toMatchObject({
      audio_end_ms: 900,
      item_id: transport.ofType('input_audio_buffer.speech_started')[0]!.item_id,
    });
  });

  it('COMPATIBILITY TRAP: a client cancel ends the response without inventing user speech', () => {
    const { link, transport, send, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    transport.drain();
    send({ type: 'response.cancel' });
    expect(link.framesOf('cancel_response')).toHaveLength(1);
    // The worker records the cancel as a discard of the utterance being spoken.
    push(interruption('discard', 'utt_1'), 600);
    push(utterance('utt_1', 'finished', 'discarded'));
    const types = transport.types();
    expect(types).not.toContain('input_audio_buffer.speech_started');
    expect(types).not.toContain('input_audio_buffer.speech_stopped');
    expect(transport.ofType('response.done')[0]!.response).toMatchObject({
      status: 'cancelled',
      status_details: { type: 'cancelled', reason: 'client_cancelled' },
    });
    // A later turn the runtime cuts for the user still gets the barge-in signal.
    push(utterance('utt_2', 'started'));
    push(assistantAudio('utt_2', 0));
    push(interruption('discard', 'utt_2'), 900);
    expect(transport.ofType('input_audio_buffer.speech_started')).toHaveLength(1);
  });

  it("an interruption with action 'continue' yields only venus events and the audio keeps flowing", () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    push(speech('started'));
    transport.drain();
    push(interruption('continue', 'utt_1'));
    expect(transport.types()).toEqual(['venus.timeline', 'venus.interruption']);
    push(assistantAudio('utt_1', 1));
    expect(transport.ofType('response.output_audio.delta')).toHaveLength(1);
  });

  it('user speech with the assistant silent gives speech_started and speech_stopped', () => {
    const { transport, push } = setup();
    push(speech('started'), 100);
    push(speech('stopped'), 700);
    const started = transport.ofType('input_audio_buffer.speech_started');
    expect(started).toEqual([expect.objectContaining({ audio_start_ms: 100 })]);
    expect(transport.ofType('input_audio_buffer.speech_stopped')).toEqual([
      expect.objectContaining({ audio_end_ms: 700, item_id: started[0]!.item_id }),
    ]);
  });

  it('work, delegation and plan events become venus events; delegation never reaches a transcript', () => {
    const { transport, push } = setup();
    push(utterance('utt_1', 'started'));
    push({
      stream: 'assistant',
      type: 'assistant.delegate',
      data: { workId: 'work_1', query: 'weather in Paris', evidenceCutoffSeq: 1, private: true },
    });
    push({ stream: 'background', type: 'work.state', data: { workId: 'work_1', state: 'RUNNING' } });
    push({
      stream: 'background',
      type: 'work.progress',
      data: { workId: 'work_1', message: 'still looking', elapsedMs: 30000 },
    });
    push({
      stream: 'background',
      type: 'work.result',
      data: {
        result: {
          workId: 'work_1',
          session: SESSION,
          incarnation: 0,
          ok: true,
          text: 'Sunny, 21 degrees.',
          policy: 'when_idle',
          completedAtMs: 1,
          expiresAtMs: 2,
        },
      },
    });
    push({
      stream: 'assistant',
      type: 'assistant.parked',
      data: { planId: 'plan_1', utteranceId: 'utt_1', remainder: 'and then' },
    });
    push({ stream: 'assistant', type: 'assistant.resume_offer', data: { planId: 'plan_1' } });
    push({ stream: 'assistant', type: 'assistant.resumed', data: { planId: 'plan_1' } });
    expect(transport.ofType('venus.delegation')).toEqual([
      expect.objectContaining({ work_id: 'work_1', query: 'weather in Paris' }),
    ]);
    expect(transport.ofType('venus.work.state')).toEqual([
      expect.objectContaining({ work_id: 'work_1', state: 'RUNNING', reason: null }),
    ]);
    expect(transport.ofType('venus.work.progress')[0]).toMatchObject({ work_id: 'work_1', elapsed_ms: 30000 });
    expect(transport.ofType('venus.work.result')[0]).toMatchObject({
      work_id: 'work_1',
      ok: true,
      text: 'Sunny, 21 degrees.',
      policy: 'when_idle',
    });
    expect(transport.ofType('venus.plan.parked')[0]).toMatchObject({ plan_id: 'plan_1', item_id: 'utt_1' });
    expect(transport.ofType('venus.plan.resume_offer')).toHaveLength(1);
    expect(transport.ofType('venus.plan.resumed')).toHaveLength(1);
    const transcripts = transport.sent.filter((e) => e.type.includes('transcript'));
    expect(JSON.stringify(transcripts)).not.toContain('weather in Paris');
  });

  it('every timeline event goes out as venus.timeline; the per-chunk audio records only when asked, as MediaRefs', () => {
    const { transport, push, send } = setup();
    const ref = { segmentId: 'u:0', track: 'user', offsetMs: 0, durationMs: 20, sampleRateHz: 16_000 } as const;
    const userAudio = (inputSeq: number): TimelineDraft => ({
      stream: 'user',
      type: 'user.audio',
      data: { inputSeq, audio: ref, durationMs: 20 },
    });
    push(utterance('utt_1', 'started'));
    push(assistantAudio('utt_1', 0));
    push(userAudio(0));
    const types = () => transport.ofType('venus.timeline').map((e) => (e.event as { type: string }).type);
    // By default an OpenAI client is not sent 50 records a second it has no use for; the audio still plays.
    expect(types()).toEqual(['assistant.utterance']);
    expect(transport.ofType('response.output_audio.delta').map((e) => e.delta)).toEqual([AUDIO_20MS]);

    send({ type: 'session.update', session: { venus: { timeline_audio: true } } });
    expect(transport.last()).toMatchObject({ type: 'session.updated', session: { venus: { timeline_audio: true } } });
    push(assistantAudio('utt_1', 1));
    push(userAudio(1));
    const timeline = transport.ofType('venus.timeline').map((e) => e.event as { type: string; data: object });
    expect(timeline.map((e) => e.type)).toEqual(['assistant.utterance', 'assistant.audio', 'user.audio']);
    expect(timeline[1]!.data).toHaveProperty('durationMs', 20);
    expect(timeline[1]!.data).toHaveProperty('audio.segmentId', 'a:1');
    expect(timeline[2]!.data).toStrictEqual({ inputSeq: 1, audio: ref, durationMs: 20 });
    // The samples went out once each, as the audio delta, not inside venus.timeline.
    expect(JSON.stringify(timeline)).not.toContain(AUDIO_20MS);
    expect(transport.ofType('response.output_audio.delta').map((e) => e.delta)).toEqual([AUDIO_20MS, AUDIO_20MS]);
  });

  it('plays assistant samples at their timeline event, and an event without samples plays nothing', () => {
    const { link, transport, push } = setup();
    push(utterance('utt_1', 'started'));
    const louder = new Int16Array(480).fill(2000);
    link.pushAudioSamples(SESSION, { utteranceId: 'utt_1', audioChunkSeq: 1 }, louder);
    expect(transport.ofType('response.output_audio.delta')).toHaveLength(0);
    // Chunk 0's event arrives without its frame (a replay, or a dropped frame): counted, not played.
    link.pushTimeline(SESSION, assistantAudio('utt_1', 0));
    expect(transport.ofType('response.output_audio.delta')).toHaveLength(0);
    link.pushTimeline(SESSION, assistantAudio('utt_1', 1));
    expect(transport.ofType('response.output_audio.delta').map((e) => e.delta)).toEqual([pcmToBase64(louder)]);
  });

  it('worker errors and session errors become error events', () => {
    const { link, transport, push } = setup();
    push({
      stream: 'system',
      type: 'session.error',
      data: { code: 'model_step_failed', message: 'boom', eventId: 'evt_7' },
    });
    expect(transport.last().error).toMatchObject({
      type: 'server_error',
      code: 'model_step_failed',
      event_id: 'evt_7',
    });
    link.push({ kind: 'error', session: SESSION, code: 'model_unavailable', message: 'no worker' });
    expect(transport.last().error).toMatchObject({ code: 'model_unavailable', message: 'no worker', event_id: null });
  });
});

describe('RealtimeConnection: closing', () => {
  it('closes the socket with 1000 when the worker closes the session', () => {
    const { link, transport } = setup();
    link.push({ kind: 'closed', session: SESSION, reason: 'idle timeout' });
    expect(transport.closedWith).toEqual({ code: 1000, reason: 'idle timeout' });
    expect(link.listenerCount(SESSION)).toBe(0);
    expect(link.framesOf('close')).toHaveLength(0);
  });

  it('closes the worker session when the client goes away', () => {
    const { link, connection } = setup();
    connection.handleClose(1001, 'bye');
    expect(link.framesOf('close')).toEqual([{ kind: 'close', session: SESSION, reason: 'client closed (1001): bye' }]);
    expect(link.listenerCount(SESSION)).toBe(0);
    connection.handleMessage(JSON.stringify({ type: 'venus.work.cancel', work_id: 'w' }));
    expect(link.framesOf('cancel_work')).toHaveLength(0);
  });

  it('disconnects a slow client (1008) instead of buffering without bound', () => {
    const { link, transport, push } = setup();
    transport.buffered = 9 * 1024 * 1024;
    push(utterance('utt_1', 'started'));
    expect(transport.closedWith?.code).toBe(1008);
    expect(transport.closedWith?.reason).toMatch(/slow client/);
    expect(link.framesOf('close')).toHaveLength(1);
    expect(transport.ofType('response.created')).toHaveLength(0);
  });
});
