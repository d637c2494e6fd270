import { EdgeToWorkerFrameSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { FakeTransport } from '../testing/fake-transport.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { sendResponseInstructions } from './response-instructions.ts';

describe('sendResponseInstructions', () => {
  it('sends the instructions of a response.create for the next response, as a valid relay frame', () => {
    const frames: unknown[] = [];
    const send = (frame: unknown) => frames.push(EdgeToWorkerFrameSchema.parse(frame));
    expect(sendResponseInstructions({ instructions: ' Answer in French. ', metadata: { a: 1 } }, 's1', send)).toBe(
      undefined,
    );
    expect(frames).toEqual([{ kind: 'response_instructions', session: 's1', instructions: 'Answer in French.' }]);
  });

  it('sends nothing without instructions, and refuses a malformed field naming it', () => {
    const frames: unknown[] = [];
    const send = (frame: unknown) => frames.push(frame);
    for (const response of [undefined, null, {}, { instructions: '  ' }, { conversation: 'auto' }]) {
      expect(sendResponseInstructions(response, 's1', send)).toBeUndefined();
    }
    for (const response of [{ instructions: 42 }, { instructions: 'x'.repeat(20_001) }, 'text']) {
      expect(sendResponseInstructions(response, 's1', send)).toMatchObject({
        code: 'invalid_event',
        param: 'response.instructions',
      });
    }
    expect(frames).toEqual([]);
  });

  it('tells the client when the model could not apply them', () => {
    const link = new FakeWorkerLink();
    const transport = new FakeTransport();
    const edge = createEdgeApp({ link, newSessionId: () => 'sess_i' });
    edge.openRealtime(transport, 'default');
    const data = { instructions: 'Answer in French.' };
    link.pushTimeline('sess_i', { stream: 'system', type: 'response.instructions', data: { ...data, applied: true } });
    expect(transport.ofType('venus.notice')).toEqual([]);
    link.pushTimeline('sess_i', { stream: 'system', type: 'response.instructions', data: { ...data, applied: false } });
    expect(transport.ofType('venus.notice')).toMatchObject([{ code: 'response_instructions_ignored' }]);
  });
});
