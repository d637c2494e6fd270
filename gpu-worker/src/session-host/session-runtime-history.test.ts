import type { ContextEntry } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { FakeModelSession, setup } from './session-runtime-fakes.ts';

/** Fake model session that takes restored history, refusing system items as a port may. */
class FakeHistoryModel extends FakeModelSession {
  readonly restored: Array<{ inputSeq: number; itemId: string } & ContextEntry> = [];
  async appendHistory(input: { inputSeq: number; itemId: string } & ContextEntry) {
    if (input.role === 'system') throw new VenusError('unsupported_feature', 'no restored system items here');
    this.restored.push(input);
    return { inputSeq: input.inputSeq };
  }
}

describe('SessionRuntime restored history', () => {
  it('records a history frame on the timeline and hands it to the model in input order', async () => {
    const model = new FakeHistoryModel();
    const { rt, boundary, ofType } = setup(model);
    rt.handleFrame({ kind: 'history', session: 's1', itemId: 'i1', role: 'assistant', text: 'Which city?' });
    rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i2', text: 'Paris' });
    await boundary();
    expect(ofType('conversation.restored').map((e) => e.data)).toEqual([
      { inputSeq: 1, itemId: 'i1', role: 'assistant', text: 'Which city?' },
    ]);
    expect(ofType('user.text')[0]?.data.inputSeq).toBe(2);
    expect(model.restored).toEqual([{ inputSeq: 1, itemId: 'i1', role: 'assistant', text: 'Which city?' }]);
    expect(ofType('session.error')).toEqual([]);
  });

  it("reports a port's refusal, and a port without history, as coded errors and lives on", async () => {
    const model = new FakeHistoryModel();
    const { rt, boundary, ofType } = setup(model);
    rt.handleFrame({ kind: 'history', session: 's1', itemId: 'i1', role: 'system', text: 'Be brief.' });
    await boundary();
    expect(ofType('session.error').map((e) => e.data.code)).toEqual(['unsupported_feature']);

    const plain = setup();
    plain.rt.handleFrame({ kind: 'history', session: 's1', itemId: 'i1', role: 'user', text: 'hi' });
    expect(plain.ofType('session.error')[0]?.data).toMatchObject({ code: 'unsupported_feature' });
    plain.rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i2', text: 'hello' });
    await plain.boundary();
    expect(plain.ofType('user.text')).toHaveLength(1);
  });

  it('hands instructions for the next response to a port that takes them, and records whether it did', async () => {
    class FakeInstructedModel extends FakeModelSession {
      readonly instructed: string[] = [];
      async instructNextResponse(input: { instructions: string }) {
        this.instructed.push(input.instructions);
      }
    }
    const model = new FakeInstructedModel();
    const taking = setup(model);
    taking.rt.handleFrame({ kind: 'response_instructions', session: 's1', instructions: 'Answer in French.' });
    await taking.boundary();
    expect(model.instructed).toEqual(['Answer in French.']);
    expect(taking.ofType('response.instructions').map((e) => e.data)).toEqual([
      { instructions: 'Answer in French.', applied: true },
    ]);

    const plain = setup();
    plain.rt.handleFrame({ kind: 'response_instructions', session: 's1', instructions: 'Answer in French.' });
    expect(plain.ofType('response.instructions')[0]?.data.applied).toBe(false);
    expect(plain.ofType('session.error')).toEqual([]);
  });
});
