import { SessionConfigSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { type FakeModelSession, setup, tick } from './session-runtime-fakes.ts';

const audio = (ms: number) => new Int16Array((24_000 * ms) / 1000).fill(1000);

describe('SessionRuntime', () => {
  it('hides a delegate span split across steps, fixes the evidence cutoff at the opening tag, and submits it', async () => {
    const { model, executor, boundary, ofType } = setup();
    model.script.push(
      { utteranceId: 'u1', text: 'Let me check. <dele', audio: audio(160) },
      { utteranceId: 'u1', text: 'gate>weather in Paris</del', audio: audio(160) },
      { utteranceId: 'u1', text: 'egate> One moment.', audio: audio(160), turnFinished: true },
    );
    await boundary();
    const afterFirstStep = ofType('assistant.text').at(-1)!.seq;
    await boundary();
    await boundary();
    expect(
      ofType('assistant.text')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('Let me check.  One moment.');
    const [delegate] = ofType('assistant.delegate');
    expect(delegate?.data.query).toBe('weather in Paris');
    expect(delegate!.data.evidenceCutoffSeq).toBeGreaterThanOrEqual(afterFirstStep);
    expect(delegate!.data.evidenceCutoffSeq).toBeLessThan(delegate!.seq);
    await tick();
    expect(executor.submitted.map((r) => r.query)).toEqual(['weather in Paris']);
    expect(ofType('assistant.utterance').map((e) => e.data.phase)).toEqual(['started', 'finished']);
  });

  it('admits a result only at a later boundary when idle, and marks it DELIVERED once playback is acknowledged', async () => {
    const { model, executor, rt, boundary, ofType } = setup();
    model.script.push({
      utteranceId: 'u1',
      text: '<delegate>time in Tokyo</delegate>',
      audio: audio(160),
      turnFinished: true,
    });
    await boundary();
    await tick();
    const req = executor.submitted[0]!;
    executor.emit({ kind: 'state', session: 's1', incarnation: 0, workId: req.workId, state: 'RUNNING' });
    executor.result(req.workId, 'It is 9 PM in Tokyo.', 'when_idle');
    const landed = ofType('work.result')[0]!;
    for (let i = 0; i < 10 && ofType('work.admitted').length === 0; i++) await boundary(400);
    const admitted = ofType('work.admitted')[0]!;
    expect(admitted.chunk).toBeGreaterThan(landed.chunk);
    expect(admitted.seq).toBeGreaterThan(landed.seq);
    expect(model.prefills[0]?.text).toBe('<backend>It is 9 PM in Tokyo.</backend>');
    model.script.push({
      utteranceId: 'u2',
      text: 'It is 9 PM in Tokyo.',
      audio: audio(160),
      turnFinished: true,
      speaksPrefill: { attemptId: model.prefills[0]!.attemptId },
    });
    await boundary();
    const states = () => ofType('work.state').map((e) => e.data.state);
    expect(states()).toEqual(['QUEUED', 'RUNNING', 'COMPLETED', 'DELIVERING']);
    rt.handleFrame({ kind: 'playback_ack', session: 's1', utteranceId: 'u2', playedMs: 160, source: 'client' });
    expect(states().at(-1)).toBe('DELIVERED');
  });

  it('discards on interruption, keeps only the heard text, and cancels the turn work when asked', async () => {
    const { model, executor, rt, boundary, ofType } = setup();
    model.script.push({
      utteranceId: 'u1',
      text: 'The weather in Paris is mild. <delegate>forecast Paris</delegate>',
      audio: audio(160),
    });
    await boundary();
    rt.handleFrame({ kind: 'playback_ack', session: 's1', utteranceId: 'u1', playedMs: 80, source: 'client' });
    model.script.push({
      utteranceId: 'u1',
      interruption: { action: 'discard', cause: 'interruption', cancelsWork: true },
      turnFinished: true,
      finishReason: 'interrupted',
    });
    await boundary();
    await tick();
    const [intr] = ofType('assistant.interruption');
    expect(intr?.data.action).toBe('discard');
    expect(intr?.data.heardMs).toBe(80);
    expect('The weather in Paris is mild.'.startsWith(intr!.data.heardText)).toBe(true);
    expect(executor.cancelled).toEqual([executor.submitted[0]!.workId]);
    expect(ofType('work.state').map((e) => e.data.state)).toEqual(['QUEUED', 'CANCELLING', 'CANCELLED']);
    // The model's context keeps exactly the heard text the timeline records.
    expect(model.acks.at(-1)).toEqual({
      utteranceId: 'u1',
      playedMs: 80,
      final: true,
      heardText: intr!.data.heardText,
    });
    // Late output of the discarded utterance is dropped.
    model.script.push({ utteranceId: 'u1', text: 'late', audio: audio(160) });
    await boundary();
    expect(ofType('assistant.text').some((e) => e.data.delta === 'late')).toBe(false);
  });

  it('parks the unspoken remainder and hands it to the model', async () => {
    const { model, rt, boundary, ofType } = setup();
    model.script.push({
      utteranceId: 'u1',
      text: 'First part of the answer. Second part follows here.',
      audio: audio(160),
    });
    await boundary();
    rt.handleFrame({ kind: 'playback_ack', session: 's1', utteranceId: 'u1', playedMs: 1200, source: 'client' });
    model.script.push({
      utteranceId: 'u2',
      text: 'Sure, the time.',
      interruption: { action: 'park', cause: 'interruption', cancelsWork: false },
    });
    await boundary();
    const [parked] = ofType('assistant.parked');
    expect(parked?.data.remainder.length).toBeGreaterThan(0);
    expect(model.parked).toEqual([parked!.data.remainder]);
    expect(
      ofType('assistant.utterance').map((e) => `${e.data.utteranceId}:${e.data.phase}:${e.data.reason ?? ''}`),
    ).toEqual(['u1:started:', 'u1:finished:parked', 'u2:started:']);
  });

  it('answers an acknowledgement for an item of another session with wrong_session and lives on', async () => {
    const { rt, boundary, ofType } = setup();
    rt.handleFrame({ kind: 'playback_ack', session: 's1', utteranceId: 'not-mine', playedMs: 10, source: 'client' });
    expect(ofType('session.error')[0]?.data.code).toBe('wrong_session');
    rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i1', text: 'hello' });
    await boundary();
    expect(ofType('user.text')).toHaveLength(1);
  });

  it('an interrupt result cuts in on the current speech: the utterance ends at what was heard before the prefill', async () => {
    const { model, executor, boundary, ofType } = setup();
    model.script.push({
      utteranceId: 'u1',
      text: '<delegate>alarm</delegate>Let me tell you a long story.',
      audio: audio(160),
    });
    await boundary();
    const req = executor.submitted[0]!;
    executor.result(req.workId, 'The alarm went off.', 'interrupt');
    // The result landed during chunk 1: it is eligible at the boundary that ends chunk 2, not before.
    model.script.push({ utteranceId: 'u1', text: ' It began', audio: audio(160) });
    await boundary();
    expect(ofType('assistant.interruption')).toEqual([]);
    model.script.push({ utteranceId: 'u1', text: ' in a town', audio: audio(160) });
    await boundary();
    const [intr] = ofType('assistant.interruption');
    expect(intr?.data).toMatchObject({ action: 'discard', utteranceId: 'u1' });
    expect(model.cancels).toBe(1);
    expect(model.prefills.map((p) => p.text)).toEqual(['<backend>The alarm went off.</backend>']);
    const order = ofType('assistant.interruption')
      .concat(ofType('work.admitted') as never[])
      .sort((a, b) => a.seq - b.seq)
      .map((e) => e.type);
    expect(order).toEqual(['assistant.interruption', 'work.admitted']);
    // Late output of the cut utterance is dropped.
    expect(ofType('assistant.text').some((e) => e.data.delta.includes('in a town'))).toBe(false);
  });

  it("sends the delegation with a snapshot of the session's other works", async () => {
    const { model, executor, boundary } = setup();
    model.script.push({ utteranceId: 'u1', text: '<delegate>weather in Paris</delegate>', turnFinished: true });
    await boundary();
    model.script.push({
      utteranceId: 'u2',
      text: '<delegate>how are my requests going</delegate>',
      turnFinished: true,
    });
    await boundary();
    const [first, second] = executor.submitted;
    expect(first?.workSnapshot).toEqual([]);
    expect(second?.workSnapshot).toEqual([
      { workId: first!.workId, query: 'weather in Paris', state: 'QUEUED', ageMs: 160 },
    ]);
  });
});

// Regression (issue 15, 9a): `venus.work.cancel` errors reached the client with `event_id: null`:
// the worker answered a refused client frame with a session.error that did not name the event.
// Frames that carry a client event (cancel_work, playback_ack) now bring its id, and the worker's
// refusal names it, so the edge's error event carries the client's event_id.
describe('work cancel errors carry a null event_id', () => {
  it("names the client's event on the refusals of cancel_work and playback_ack", () => {
    const { rt, ofType } = setup();
    rt.handleFrame({ kind: 'cancel_work', session: 's1', workId: 'w_nobody', eventId: 'evt_cancel' });
    rt.handleFrame({
      kind: 'playback_ack',
      session: 's1',
      utteranceId: 'u_x',
      playedMs: 1,
      source: 'client',
      eventId: 'evt_ack',
    });
    expect(ofType('session.error').map((e) => [e.data.code, e.data.eventId])).toEqual([
      ['work_not_found', 'evt_cancel'],
      ['wrong_session', 'evt_ack'],
    ]);
  });
});

describe('SessionRuntime client calls', () => {
  const delegateOnce = (model: FakeModelSession) =>
    model.script.push({
      utteranceId: 'u1',
      text: '<delegate>where is order 4417</delegate>',
      audio: audio(160),
      turnFinished: true,
    });

  it("asks the client for a picked client function, and lands the client's output as the work's result", async () => {
    const { model, executor, rt, boundary, ofType } = setup();
    delegateOnce(model);
    await boundary();
    await tick();
    const { workId } = executor.submitted[0]!;
    executor.emit({
      kind: 'state',
      session: 's1',
      incarnation: 0,
      workId,
      state: 'RUNNING',
      functionName: 'lookup_order',
    });
    const base = { session: 's1', incarnation: 0, workId };
    const clientCall = { name: 'lookup_order', arguments: '{"order_id":"4417"}' };
    const result = {
      ...base,
      ok: true,
      text: '',
      policy: 'when_idle' as const,
      completedAtMs: 0,
      expiresAtMs: 1e15,
      clientCall,
    };
    executor.emit({ ...base, kind: 'result', result });
    executor.emit({ ...base, kind: 'result', result }); // a retried job's second plan asks nothing twice
    const [call] = ofType('work.client_call');
    expect(ofType('work.client_call')).toHaveLength(1);
    expect(call?.data).toEqual({ workId, callId: `call_${workId}`, ...clientCall });
    expect(ofType('work.result')).toEqual([]);

    rt.handleFrame({ kind: 'function_output', session: 's1', callId: 'call_nope', output: 'x', eventId: 'evt_9' });
    expect(ofType('session.error').at(-1)?.data).toMatchObject({ code: 'work_not_found', eventId: 'evt_9' });
    rt.handleFrame({
      kind: 'function_output',
      session: 's1',
      callId: call!.data.callId,
      output: '{"status":"shipped"}',
    });
    rt.handleFrame({ kind: 'function_output', session: 's1', callId: call!.data.callId, output: 'again' });
    expect(ofType('work.result').map((e) => [e.data.result.text, e.data.result.functionName])).toEqual([
      ['status: shipped', 'lookup_order'],
    ]);
    await boundary(2000);
    await boundary(2000);
    expect(model.prefills.map((p) => p.text)).toEqual(['<backend>status: shipped</backend>']);
  });

  it('fails a call the client leaves unanswered past its timeout, with an apology to speak', async () => {
    const { model, executor, boundary, ofType } = setup();
    delegateOnce(model);
    await boundary();
    await tick();
    const { workId } = executor.submitted[0]!;
    const base = { session: 's1', incarnation: 0, workId };
    executor.emit({ ...base, kind: 'state', state: 'RUNNING', functionName: 'lookup_order' });
    const clientCall = { name: 'lookup_order', arguments: '{}' };
    executor.emit({
      ...base,
      kind: 'result',
      result: { ...base, ok: true, text: '', policy: 'when_idle', completedAtMs: 0, expiresAtMs: 1e15, clientCall },
    });
    await boundary(179_000);
    expect(ofType('work.result')).toEqual([]);
    await boundary(2000);
    expect(ofType('work.result').map((e) => [e.data.result.ok, e.data.result.text])).toEqual([
      [false, "Sorry, I couldn't get that: the app did not answer in time."],
    ]);
  });

  it('with client delegation, every delegation goes to the client as it was put, and not to the harness', async () => {
    const { model, executor, rt, boundary, ofType } = setup();
    rt.handleFrame({
      kind: 'config',
      session: 's1',
      config: SessionConfigSchema.parse({ chunkMs: 160, delegation: 'client' }),
    });
    delegateOnce(model);
    await boundary();
    await tick();
    expect(executor.submitted).toEqual([]);
    expect(ofType('work.client_call').map((e) => [e.data.name, e.data.arguments])).toEqual([
      ['delegation', '{"query":"where is order 4417"}'],
    ]);
    expect(ofType('work.state').map((e) => e.data.state)).toEqual(['QUEUED', 'RUNNING']);
  });
});
