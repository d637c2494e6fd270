import { randomUUID } from 'node:crypto';
import { type ModelSession, type OutputStep, VenusError } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { OfficialServiceModelPort, type OfficialServiceOptions } from '../gpu-worker/src/model-ports/index.ts';
import { type InputCursor, modelPortContract } from './contracts/model-port-contract.ts';
import { DEFAULT_REPLY, sine } from './fixtures/venus-service-sim-model.ts';
import {
  FIXTURE_TOKENIZER,
  startVenusServiceSimulator,
  type VenusServiceSimulator,
  type VenusServiceSimulatorOptions,
} from './fixtures/venus-service-simulator.ts';

const SECOND = 16_000;

function tone(samples = SECOND): Int16Array {
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16_000));
  return pcm;
}

async function speak(s: ModelSession, input: InputCursor): Promise<void> {
  await s.appendAudio({ inputSeq: input.next(), pcm16k: tone() });
}

async function silence(s: ModelSession, input: InputCursor): Promise<void> {
  await s.appendAudio({ inputSeq: input.next(), pcm16k: new Int16Array(SECOND) });
}

function portFor(sim: VenusServiceSimulator, extra: Partial<OfficialServiceOptions> = {}): OfficialServiceModelPort {
  return new OfficialServiceModelPort({
    baseUrl: sim.url,
    tokenizerPath: FIXTURE_TOKENIZER,
    outputTimeoutS: 0.2,
    retryBaseMs: 5,
    ...extra,
  });
}

modelPortContract('official service adapter over the service simulator', async () => {
  const sim = await startVenusServiceSimulator({ script: { delegate: 'weather in Paris' } });
  const port = portFor(sim);
  return {
    port,
    feed: speak,
    idle: silence,
    // The official serving port consumes input at its own pace and reports the cutoff it reached.
    honoursRequestedCutoff: false,
    cleanup: async () => {
      await port.close();
      await sim.close();
    },
  };
});

describe('OfficialServiceModelPort', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(
    simOptions: VenusServiceSimulatorOptions = {},
    portOptions: Partial<OfficialServiceOptions> = {},
  ) {
    const sim = await startVenusServiceSimulator(simOptions);
    const port = portFor(sim, portOptions);
    cleanups.push(
      () => sim.close(),
      () => port.close(),
    );
    return { sim, port };
  }

  let chunk = 0;
  const stepOf = (s: ModelSession, cutoff = 0) =>
    s.step({ chunk: chunk++, inputSeqCutoff: cutoff, atMs: 0, assistantAudible: false });

  /** Steps, feeding a second of silence before each, until the utterance that starts finishes. */
  async function collectTurn(s: ModelSession, input: InputCursor, maxSteps = 10): Promise<OutputStep[]> {
    const steps: OutputStep[] = [];
    for (let i = 0; i < maxSteps; i++) {
      const step = await stepOf(s, input.last);
      if (step.utteranceId !== null) steps.push(step);
      if (step.turnFinished) return steps;
      await silence(s, input);
    }
    throw new Error(`no finished turn in ${maxSteps} steps`);
  }

  function cursorAt(start = 0): InputCursor {
    let last = start;
    return {
      next: () => ++last,
      get last() {
        return last;
      },
    };
  }

  it('speaks the wire protocol the official client speaks', async () => {
    const { sim, port } = await setup();
    const s = await port.openSession({ sessionId: 'wire', incarnation: 7 });
    await s.appendAudio({ inputSeq: 10, pcm16k: tone(8000) });
    await s.appendAudio({ inputSeq: 12, pcm16k: tone(8000) });
    await s.appendVideoFrame({ inputSeq: 13, mimeType: 'image/png', data: new Uint8Array([1, 2, 3]) });
    const gif = await s
      .appendVideoFrame({ inputSeq: 14, mimeType: 'image/gif', data: new Uint8Array([1]) })
      .catch((e: unknown) => e);
    expect(VenusError.isInstance(gif) && gif.code).toBe('unsupported_feature');
    const typed = await s.appendText({ inputSeq: 15, itemId: 'i', text: 'hi' }).catch((e: unknown) => e);
    expect(VenusError.isInstance(typed) && typed.code).toBe('unsupported_feature');
    await s.close('bye');
    const open = sim.requests.find((r) => r.method === 'POST' && r.path === '/sessions');
    expect(open?.body).toEqual({
      session_id: 'wire',
      model: 'Realtime-Venus-Omni',
      protocol_version: 'realtime-venus-harness/2',
    });
    const audio = sim.requests.filter((r) => r.path === '/sessions/wire/audio').map((r) => r.body);
    expect(audio).toMatchObject([
      { session_id: 'wire', incarnation: 1, event_seq: 1, start_ms: 0, end_ms: 500, sample_rate_hz: 16_000 },
      { session_id: 'wire', incarnation: 1, event_seq: 2, start_ms: 500, end_ms: 1000, format: 'pcm_s16le' },
    ]);
    expect(sim.requests.find((r) => r.path === '/sessions/wire/video_frame')?.body).toMatchObject({
      event_seq: 3,
      mime_type: 'image/png',
      data: 'AQID',
    });
    const sent = Buffer.from((audio[0] as { data: string }).data, 'base64');
    expect(new Int16Array(sent.buffer, sent.byteOffset, sent.byteLength / 2)).toEqual(tone(8000));
    const del = sim.requests.find((r) => r.method === 'DELETE');
    expect(del).toMatchObject({ path: '/sessions/wire', query: { incarnation: '1', reason: 'bye' } });
  });

  it('decodes token ids into text, delegate tags, 24 kHz audio and utterances', async () => {
    const reply = 'It is 18°C 👋 in Paris.';
    const { port } = await setup({ script: { reply, delegate: 'weather in Paris', stepsPerTurn: 5 } });
    const s = await port.openSession({ sessionId: 'decode', incarnation: 0 });
    const input = cursorAt();
    await speak(s, input);
    const turn = await collectTurn(s, input);
    expect(turn.map((t) => t.text).join('')).toBe(`${reply}<delegate>weather in Paris</delegate>`);
    expect(new Set(turn.map((t) => t.utteranceId)).size).toBe(1);
    expect(turn.every((t) => t.decision === 'speak')).toBe(true);
    const audible = turn.filter((t) => t.audio !== null);
    expect(audible[0]?.audio).toEqual(sine(24_000, 0));
    expect(audible.map((t) => t.audioChunkSeq)).toEqual(audible.map((_, i) => i));
    expect(turn.at(-1)).toMatchObject({ turnFinished: true, finishReason: 'completed' });
    expect(turn[0]?.inputSeqCutoff).toBe(1);

    // The next turn is another service generation, so another utterance.
    await speak(s, input);
    const again = await collectTurn(s, input);
    expect(again[0]?.utteranceId).not.toBe(turn[0]?.utteranceId);
    expect(again[0]?.inputSeqCutoff).toBe(input.last - again.length + 1);
  });

  it('marks the utterance that speaks a prefilled result and acknowledges playback in service chunks', async () => {
    const { sim, port } = await setup({ script: { backendReply: (r) => `Good news: ${r}` } });
    const s = await port.openSession({ sessionId: 'prefill', incarnation: 0 });
    const ack = await s.prefill({
      text: '<backend>It is sunny.</backend>',
      workId: 'w1',
      attemptId: 'w1:0',
      mode: 'speak',
    });
    expect(ack).toEqual({ attemptId: 'w1:0', deduplicated: false });
    expect(sim.requests.find((r) => r.path.endsWith('/prefill'))?.body).toMatchObject({
      work_id: 'w1',
      attempt_id: 'w1:0',
      text_list: ['<backend>It is sunny.</backend>'],
      visibility: 'private',
      resume_generation: true,
    });
    const turn = await collectTurn(s, cursorAt());
    expect(turn[0]?.speaksPrefill).toEqual({ attemptId: 'w1:0' });
    expect(turn.map((t) => t.text).join('')).toBe('Good news: It is sunny.');
    const id = turn[0]?.utteranceId as string;
    await s.playbackAck({ utteranceId: id, playedMs: 1500, final: false });
    await s.playbackAck({ utteranceId: id, playedMs: 900, final: false });
    await s.playbackAck({ utteranceId: id, playedMs: 60_000, final: true });
    const acks = sim.requests.filter((r) => r.path.endsWith('/playback_ack')).map((r) => r.body);
    expect(acks).toMatchObject([
      { utterance_id: id, cumulative_played_chunks: 1, caused_by_work_id: 'w1' },
      { utterance_id: id, cumulative_played_chunks: 1 },
      { utterance_id: id, cumulative_played_chunks: 3 },
    ]);
  });

  it('takes a restored function result as a silent prefill and refuses restored messages', async () => {
    const { sim, port } = await setup();
    const s = await port.openSession({ sessionId: 'restore', incarnation: 0 });
    const text = 'The function lookup_order was called with {"id":"4417"} and returned: shipped';
    expect(await s.appendHistory?.({ inputSeq: 1, itemId: 'fo1', role: 'backend', text })).toEqual({ inputSeq: 1 });
    expect(sim.requests.find((r) => r.path.endsWith('/prefill'))?.body).toMatchObject({
      attempt_id: 'history_fo1',
      text_list: [`<backend>${text}</backend>`],
      visibility: 'private',
      resume_generation: false,
    });
    for (const role of ['user', 'assistant', 'system'] as const) {
      const refused = s.appendHistory?.({ inputSeq: 2, itemId: `m_${role}`, role, text: 'hello' });
      await expect(refused).rejects.toMatchObject({ code: 'unsupported_feature' });
    }
    // The refusals used no input: the next input takes the next number.
    await expect(s.appendAudio({ inputSeq: 2, pcm16k: tone() })).resolves.toEqual({ inputSeq: 2 });
  });

  it('turns an output long-poll timeout (408) into a listen step with no output', async () => {
    const { sim, port } = await setup();
    const s = await port.openSession({ sessionId: 'quiet', incarnation: 0 });
    const step = await stepOf(s);
    expect(step).toMatchObject({ decision: 'listen', text: '', utteranceId: null, audio: null, turnFinished: false });
    const poll = sim.requests.find((r) => r.path.endsWith('/output'));
    expect(poll?.query).toEqual({ incarnation: '1', timeout_s: '0.2' });
  });

  it('keeps an utterance speaking through a 408 in the middle of it', async () => {
    const { port } = await setup();
    const s = await port.openSession({ sessionId: 'pause', incarnation: 0 });
    const input = cursorAt();
    await speak(s, input);
    const first = await stepOf(s, input.last);
    expect(first.utteranceId).not.toBeNull();
    // No more microphone audio: the foreground generation cannot advance and the poll times out.
    const stalled = await stepOf(s, input.last);
    expect(stalled).toMatchObject({ decision: 'speak', utteranceId: first.utteranceId, text: '', audio: null });
    expect(stalled.stepSeq).toBeGreaterThan(first.stepSeq);
  });

  it('retries 5xx answers and then succeeds', async () => {
    const { sim, port } = await setup({}, { retries: 2 });
    const s = await port.openSession({ sessionId: 'flaky', incarnation: 0 });
    sim.faults.failNext(2, { path: /\/audio$/ });
    await expect(s.appendAudio({ inputSeq: 1, pcm16k: tone() })).resolves.toEqual({ inputSeq: 1 });
    expect(sim.requests.filter((r) => r.path.endsWith('/audio'))).toHaveLength(3);
  });

  it('gives up after the retries with a retryable model_unavailable', async () => {
    const { sim, port } = await setup({}, { retries: 2 });
    const s = await port.openSession({ sessionId: 'down', incarnation: 0 });
    sim.faults.failNext(3, { status: 503, path: /\/output$/ });
    const err = await stepOf(s).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('model_unavailable');
    expect(VenusError.isInstance(err) && err.retryable).toBe(true);
  });

  it('reports a malformed step as model_step_failed naming the field', async () => {
    const { sim, port } = await setup();
    const s = await port.openSession({ sessionId: 'garbled', incarnation: 0 });
    const input = cursorAt();
    await speak(s, input);
    sim.faults.malformNextStep('total_token_ids');
    const err = await stepOf(s).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('model_step_failed');
    expect(String((err as Error).message)).toContain('total_token_ids');
  });

  it('fences a session taken over by another worker with stale_incarnation from the service', async () => {
    const { sim, port } = await setup();
    const other = portFor(sim);
    cleanups.push(() => other.close());
    const old = await port.openSession({ sessionId: 'moved', incarnation: 1 });
    const fresh = await other.openSession({ sessionId: 'moved', incarnation: 2 });
    expect(fresh.incarnation).toBe(2);
    const err = await old.appendAudio({ inputSeq: 1, pcm16k: tone() }).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('stale_incarnation');
    expect(sim.requests.some((r) => r.method === 'DELETE' && r.query.reason === 'superseded')).toBe(true);
    await expect(fresh.appendAudio({ inputSeq: 1, pcm16k: tone() })).resolves.toEqual({ inputSeq: 1 });
  });

  it('reports a full service as a retryable model_unavailable', async () => {
    const { port } = await setup({ maxSessions: 1 });
    await port.openSession({ sessionId: 'first', incarnation: 0 });
    const err = await port.openSession({ sessionId: 'second', incarnation: 0 }).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('model_unavailable');
    expect(VenusError.isInstance(err) && err.retryable).toBe(true);
    expect(String((err as Error).message)).toContain('max_sessions=1');
  });

  it('takes maxSessions from the service', async () => {
    const { port } = await setup({ maxSessions: 3, modelRevision: 'rev-42' });
    const caps = await port.capabilities();
    expect(caps).toMatchObject({
      maxSessions: 3,
      modelRevision: 'rev-42',
      model: 'Realtime-Venus-Omni',
      textInput: false,
    });
    expect(caps.specialTokens).toMatchObject({ listen: '<|listen|>', speak: '<|speak|>', turnEos: '<|turn_eos|>' });
  });

  it('still describes a full single-session service without opening anything', async () => {
    const { sim } = await setup({ maxSessions: 1 });
    const holder = portFor(sim);
    cleanups.push(() => holder.close());
    await holder.openSession({ sessionId: 'busy', incarnation: 0 });
    const fresh = portFor(sim);
    cleanups.push(() => fresh.close());
    expect((await fresh.capabilities()).maxSessions).toBe(1);
  });

  it('refuses a service that is not ready or not in delta token mode', async () => {
    const { sim, port } = await setup();
    sim.faults.ready = false;
    const notReady = await port.capabilities().catch((e: unknown) => e);
    expect(VenusError.isInstance(notReady) && notReady.code).toBe('model_unavailable');
    sim.faults.ready = true;
    sim.faults.rawTokenMode = 'cumulative';
    const err = await port.openSession({ sessionId: `c-${randomUUID()}`, incarnation: 0 }).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('model_unavailable');
    expect(String((err as Error).message)).toContain('raw_token_mode');
  });

  it('closes with DELETE, after which the service itself answers 410', async () => {
    const { sim, port } = await setup();
    const s = await port.openSession({ sessionId: 'gone', incarnation: 0 });
    await s.close('client_close');
    const err = await stepOf(s).catch((e: unknown) => e);
    expect(VenusError.isInstance(err) && err.code).toBe('session_closed');
    const direct = await fetch(`${sim.url}/sessions/gone/output?incarnation=1&timeout_s=0`, { method: 'POST' });
    expect(direct.status).toBe(410);
    expect(await direct.json()).toMatchObject({ type: 'SessionClosedError' });
  });

  it('speaks the default reply when the script names none', async () => {
    const { port } = await setup();
    const s = await port.openSession({ sessionId: 'default', incarnation: 0 });
    const input = cursorAt();
    await speak(s, input);
    const turn = await collectTurn(s, input);
    expect(turn.map((t) => t.text).join('')).toBe(DEFAULT_REPLY);
  });
});
