import { describe, expect, it } from 'vitest';
import { fieldNotices, flatten, noteFields } from './session-fields.ts';
import { applySessionUpdate, initialSessionState, sessionObject } from './session-state.ts';

const state = initialSessionState('sess_1', { chunkMs: 160, deliveryPolicy: 'when_idle', voice: 'en-us' });

describe('flatten', () => {
  it('walks objects, keeps arrays, null and empty objects as leaves', () => {
    expect(flatten({ a: { b: 1, c: [1, 2] }, d: null, e: {}, f: undefined }, 'session')).toEqual([
      { path: 'session.a.b', value: 1 },
      { path: 'session.a.c', value: [1, 2] },
      { path: 'session.d', value: null },
      { path: 'session.e', value: {} },
    ]);
  });
});

describe('noteFields', () => {
  it('names every leaf not applied: by its rule once, or as unknown', () => {
    const notes = noteFields(
      { instructions: 'x', transcription: { model: 'm', language: 'en' }, speed: 1, weird: 3 },
      'session',
      new Set(['instructions']),
      [
        { path: 'transcription', kind: 'approximate', how: 'ours' },
        { path: 'speed', applied: (v) => v === 1, kind: 'not_applied', how: 'fixed' },
      ],
    );
    expect(notes).toEqual([
      { param: 'session.transcription', kind: 'approximate', how: 'ours' },
      { param: 'session.weird', kind: 'not_applied', how: 'not a field the runtime knows' },
    ]);
    const notices = fieldNotices(notes, 'session.update');
    expect(notices.map((n) => [n.code, n.fields.map((f) => f.param)])).toEqual([
      ['field_approximate', ['session.transcription']],
      ['field_not_applied', ['session.weird']],
    ]);
    expect(notices[1]?.message).toContain('session.weird');
  });
});

describe('applySessionUpdate: every field applied, noticed or refused', () => {
  it('LiveKit-like GA update: semantic VAD mapped with notices, the rest applied', () => {
    const result = applySessionUpdate(state, {
      type: 'realtime',
      model: 'gpt-realtime',
      output_modalities: ['text'],
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: { model: 'gpt-4o-mini-transcribe' },
          turn_detection: {
            type: 'semantic_vad',
            eagerness: 'medium',
            create_response: true,
            interrupt_response: true,
          },
        },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' },
      },
      max_output_tokens: 'inf',
      tool_choice: 'auto',
    });
    if (!result.ok) throw new Error(result.error.message);
    const fields = result.notices.flatMap((n) => (n.fields ?? []).map((f) => `${n.code} ${f.param}`));
    expect(fields).toEqual([
      'field_approximate session.audio.input.transcription',
      'field_approximate session.audio.input.turn_detection.eagerness',
      'field_not_applied session.model',
    ]);
    expect(result.state.outputModality).toBe('text');
    expect(result.state.turnDetection).toEqual({ type: 'semantic_vad', eagerness: 'medium' });
    expect(sessionObject(result.state)).toMatchObject({ output_modalities: ['text'], modalities: ['text'] });
  });

  it('turn_detection null is push to talk, shown as null, with no notice', () => {
    const result = applySessionUpdate(state, { turn_detection: null });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.state.turnDetection).toBeNull();
    expect(result.notices).toEqual([]);
    expect(sessionObject(result.state)).toMatchObject({
      turn_detection: null,
      audio: { input: { turn_detection: null } },
    });
  });

  it('refuses a bad turn detection or modality naming the field', () => {
    const vad = applySessionUpdate(state, {
      audio: { input: { turn_detection: { type: 'semantic_vad', eagerness: 'eager' } } },
    });
    expect(vad).toMatchObject({
      ok: false,
      error: { code: 'invalid_event', param: 'session.audio.input.turn_detection.eagerness' },
    });
    const modalities = applySessionUpdate(state, { output_modalities: ['video'] });
    expect(modalities).toMatchObject({ ok: false, error: { param: 'session.output_modalities' } });
  });

  it('create_response false and VAD tuning are named; temperature is not applied', () => {
    const result = applySessionUpdate(state, {
      turn_detection: { type: 'server_vad', create_response: false, silence_duration_ms: 300, threshold: 0.6 },
      temperature: 0.8,
    });
    if (!result.ok) throw new Error(result.error.message);
    const params = result.notices.flatMap((n) => (n.fields ?? []).map((f) => f.param));
    expect(params.sort()).toEqual([
      'session.temperature',
      'session.turn_detection.create_response',
      'session.turn_detection.silence_duration_ms',
      'session.turn_detection.threshold',
    ]);
  });
});
