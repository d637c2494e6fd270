import { pcmToBase64, type TimelineDraft } from '@venus/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { FakeTransport } from '../testing/fake-transport.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { COMMIT_SILENCE_MS, MAX_HELD_MS } from './input-audio-buffer.ts';

/**
 * Output modalities, response.create requests, usage and push to talk, on a RealtimeConnection over
 * a fake worker link and a fake transport.
 */
const SESSION = 'sess_opts';
const PCM_20MS = new Int16Array(480).fill(1000);
const AUDIO_20MS = pcmToBase64(PCM_20MS);

function setup() {
  const link = new FakeWorkerLink();
  const transport = new FakeTransport();
  const edge = createEdgeApp({ link, newSessionId: () => SESSION });
  const connection = edge.openRealtime(transport, 'default');
  const send = (event: object) => connection.handleMessage(JSON.stringify(event));
  const push = (draft: TimelineDraft) => {
    if (draft.type === 'assistant.audio') link.pushAudioSamples(SESSION, draft.data, PCM_20MS);
    return link.pushTimeline(SESSION, draft);
  };
  const speak = (id: string, text: string) => {
    push({ stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: id, phase: 'started' } });
    push({ stream: 'assistant', type: 'assistant.text', data: { utteranceId: id, delta: text } });
    push({
      stream: 'assistant',
      type: 'assistant.audio',
      data: {
        utteranceId: id,
        audioChunkSeq: 0,
        audio: { segmentId: 'a:0', track: 'assistant', offsetMs: 0, durationMs: 20, sampleRateHz: 24_000 },
        startMs: 0,
        durationMs: 20,
      },
    });
    push({
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId: id, phase: 'finished', reason: 'completed' },
    });
  };
  const types = () => transport.types().filter((t) => t !== 'venus.timeline');
  return { link, transport, send, speak, types };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('output_modalities ["text"]', () => {
  it('a response comes as output_text, with no audio events', () => {
    const { transport, send, speak, types } = setup();
    send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'] } });
    transport.drain();
    speak('utt_1', 'Hello');
    expect(types()).toEqual([
      'response.created',
      'response.output_item.added',
      'conversation.item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'conversation.item.done',
      'response.done',
    ]);
    const done = transport.ofType('response.done')[0]!.response as Record<string, unknown>;
    expect(done).toMatchObject({
      output_modalities: ['text'],
      output: [{ content: [{ type: 'output_text', text: 'Hello' }] }],
    });
  });

  it('beta modalities ["text"] gives the beta text names too', () => {
    const { transport, send, speak, types } = setup();
    send({ type: 'session.update', session: { modalities: ['text'] } });
    transport.drain();
    speak('utt_1', 'Hi');
    expect(types()).toContain('response.text.delta');
    expect(types()).not.toContain('response.audio.delta');
    expect(transport.ofType('response.content_part.added')[0]!.part).toEqual({ type: 'text', text: '' });
  });
});

describe('response.create', () => {
  it('metadata and modality go to the next response the model begins, and only that one', () => {
    const { transport, send, speak } = setup();
    send({ type: 'session.update', session: { type: 'realtime' } });
    send({ type: 'response.create', response: { metadata: { turn: '7' }, output_modalities: ['text'] } });
    expect(transport.ofType('venus.notice').map((n) => n.code)).toEqual(['proactive_model']);
    speak('utt_1', 'First');
    speak('utt_2', 'Second');
    const created = transport.ofType('response.created').map((e) => e.response as Record<string, unknown>);
    const done = transport.ofType('response.done').map((e) => e.response as Record<string, unknown>);
    expect(created.map((r) => [r.metadata, r.output_modalities])).toEqual([
      [{ turn: '7' }, ['text']],
      [null, ['audio']],
    ]);
    expect(done.map((r) => r.metadata)).toEqual([{ turn: '7' }, null]);
  });

  it('conversation "none" is refused naming response.conversation; instructions go to the worker, other fields are named in a notice', () => {
    const { link, transport, send } = setup();
    transport.drain();
    send({ type: 'response.create', event_id: 'evt_1', response: { conversation: 'none' } });
    expect(transport.last()).toMatchObject({
      type: 'error',
      error: { code: 'unsupported_feature', param: 'response.conversation', event_id: 'evt_1' },
    });
    expect(link.framesOf('response_instructions')).toEqual([]);
    send({ type: 'response.create', response: { instructions: 'Be brief.', temperature: 0.2, tools: [] } });
    expect(link.framesOf('response_instructions')).toEqual([
      { kind: 'response_instructions', session: SESSION, instructions: 'Be brief.' },
    ]);
    const notice = transport.ofType('venus.notice').at(-1)!;
    expect(notice.code).toBe('field_not_applied');
    expect((notice.fields as { param: string }[]).map((f) => f.param)).toEqual([
      'response.temperature',
      'response.tools',
    ]);
  });
});

describe('usage on response.done', () => {
  it('counts the turn input and the spoken output, estimated at OpenAI audio token rates', () => {
    const { transport, send, speak } = setup();
    for (let i = 0; i < 50; i++) send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS }); // 1 s
    speak('utt_1', 'Hello there'); // 20 ms of audio, 11 characters
    const response = transport.ofType('response.done')[0]!.response as Record<string, unknown>;
    expect(response.usage).toMatchObject({
      input_tokens: 10,
      output_tokens: 1 + 3,
      input_token_details: { audio_tokens: 10, text_tokens: 0 },
      output_token_details: { audio_tokens: 1, text_tokens: 3 },
    });
    expect(response.venus).toMatchObject({ usage_estimated: true, input_audio_seconds: 1, output_audio_seconds: 0.02 });
  });
});

describe('turn_detection null: push to talk', () => {
  it('holds appended audio until commit, then one user turn: committed, the item, the audio and silence', () => {
    const { link, transport, send } = setup();
    send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    });
    const before = transport.ofType('conversation.item.added')[0]!.item as { id: string };
    send({ type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: null } } } });
    for (let i = 0; i < 10; i++) send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS });
    expect(link.framesOf('audio')).toHaveLength(0);
    transport.drain();
    send({ type: 'input_audio_buffer.commit' });
    const committed = transport.ofType('input_audio_buffer.committed')[0]!;
    expect(committed.previous_item_id).toBe(before.id);
    const added = transport.ofType('conversation.item.added')[0]!;
    expect(added).toMatchObject({
      previous_item_id: before.id,
      item: { id: committed.item_id, role: 'user', content: [{ type: 'input_audio', transcript: null }] },
    });
    const relayedMs = link.framesOf('audio').reduce((ms, f) => ms + f.pcm16k.byteLength / 32, 0);
    expect(relayedMs).toBe(200 + COMMIT_SILENCE_MS);
    // The worker's own speech events make no second commit or speech_started under push to talk.
    link.pushTimeline(SESSION, { stream: 'user', type: 'user.speech', data: { state: 'started', probability: 0.9 } });
    link.pushTimeline(SESSION, { stream: 'user', type: 'user.speech', data: { state: 'stopped', probability: 0.1 } });
    expect(transport.ofType('input_audio_buffer.speech_started')).toHaveLength(0);
    expect(transport.ofType('input_audio_buffer.committed')).toHaveLength(1);
  });

  it('clear drops held audio; an empty commit is refused; past the bound audio_too_large', () => {
    const { link, transport, send } = setup();
    send({ type: 'session.update', session: { turn_detection: null } });
    send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS });
    send({ type: 'input_audio_buffer.clear' });
    send({ type: 'input_audio_buffer.commit', event_id: 'evt_c' });
    expect(transport.last()).toMatchObject({ type: 'error', error: { code: 'invalid_event', event_id: 'evt_c' } });
    const second = pcmToBase64(new Int16Array(24_000).fill(1)); // 1 s
    // One second a second: within the tenant's real-time input budget.
    for (let i = 0; i < MAX_HELD_MS / 1000; i++) {
      vi.advanceTimersByTime(1000);
      send({ type: 'input_audio_buffer.append', audio: second });
    }
    expect(transport.ofType('error')).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    send({ type: 'input_audio_buffer.append', audio: second });
    expect(transport.last()).toMatchObject({
      type: 'error',
      error: { code: 'audio_too_large', param: 'input_audio_buffer' },
    });
    expect(link.framesOf('audio')).toHaveLength(0);
  });

  it('back to server_vad: what was held is relayed, later audio goes straight on', () => {
    const { link, send } = setup();
    send({ type: 'session.update', session: { turn_detection: null } });
    send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS });
    send({ type: 'session.update', session: { turn_detection: { type: 'server_vad' } } });
    send({ type: 'input_audio_buffer.append', audio: AUDIO_20MS });
    expect(link.framesOf('audio')).toHaveLength(2);
  });
});
