import { describe, expect, it } from 'vitest';
import { AudioDelta } from '../audio/audio-delta.ts';
import { OutputAudioEncoder } from '../audio/output-audio-encoder.ts';
import { serverEventJson } from './event-json.ts';

const pcm = Int16Array.from({ length: 480 }, (_, i) => Math.round(3000 * Math.sin(i / 7)));

describe('serverEventJson', () => {
  it('writes an audio delta exactly as JSON.stringify of the event with its base64 would be', () => {
    const delta = new AudioDelta(pcm, new OutputAudioEncoder('pcm16'));
    const event = {
      type: 'response.output_audio.delta',
      response_id: 'resp_1',
      item_id: 'it"em\\1',
      output_index: 0,
      content_index: 0,
      skipped: undefined,
      delta,
    };
    const { skipped: _, ...usual } = event;
    const base64 = Buffer.from(pcm.buffer).toString('base64');
    // The usual shape (written out) and any other (field by field): both as JSON.stringify would write them.
    const reversed = Object.fromEntries(Object.entries(usual).reverse()) as typeof usual;
    for (const shape of [usual, event, { ...usual, output_index: undefined }, reversed]) {
      const text = serverEventJson(shape, 'event_7');
      expect(text).toBe(JSON.stringify({ event_id: 'event_7', ...shape, delta: base64 }));
      expect(JSON.parse(text).delta).toBe(delta.base64);
    }
  });

  it('encodes a delta once, in the output format, for both of its names', () => {
    const encoder = new OutputAudioEncoder('g711_ulaw');
    let encodes = 0;
    const counting = Object.assign(Object.create(encoder), {
      encode: (samples: Int16Array) => {
        encodes += 1;
        return encoder.encode(samples);
      },
    }) as OutputAudioEncoder;
    const delta = new AudioDelta(pcm, counting);
    const ga = JSON.parse(serverEventJson({ type: 'response.output_audio.delta', delta }, 'e1'));
    const beta = JSON.parse(serverEventJson({ type: 'response.audio.delta', delta }, 'e2'));
    expect(encodes).toBe(1);
    expect(ga.delta).toBe(beta.delta);
    expect(Buffer.from(ga.delta, 'base64').length).toBe(160); // 20 ms of 8 kHz mu-law
  });

  it('serialises every other event with JSON.stringify, the event_id first', () => {
    const event = { type: 'response.done', response: { id: 'resp_1', note: 'a "quoted" line\n' } };
    expect(serverEventJson(event, 'event_2')).toBe(JSON.stringify({ event_id: 'event_2', ...event }));
  });
});
