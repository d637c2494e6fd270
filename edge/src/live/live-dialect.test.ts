import { describe, expect, it } from 'vitest';
import { LiveDialect } from './live-dialect.ts';

const start = (session: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'session.start', event_id: 's1', session: { model: 'gpt-live-1', ...session } });

function started() {
  const dialect = new LiveDialect({ nowMs: () => 1500 });
  const inbound = dialect.inbound(start({ delegation: { type: 'client' } }));
  const update = inbound.kind === 'forward' ? inbound.events[0] : undefined;
  dialect.outbound({ type: 'session.updated', event_id: 'e1', session: { id: 'sess_1' } });
  return { dialect, update };
}

describe('LiveDialect', () => {
  it('starts a session as a realtime session.update with client delegation, acknowledged as session.started', () => {
    const dialect = new LiveDialect({ nowMs: () => 0 });
    const inbound = dialect.inbound(start({ delegation: { type: 'client' }, instructions: 'Be brief.' }));
    expect(inbound).toMatchObject({
      kind: 'forward',
      events: [{ type: 'session.update', session: { instructions: 'Be brief.', venus: { delegation: 'client' } } }],
    });
    expect(dialect.outbound({ type: 'session.updated', event_id: 'e1', session: { id: 'sess_1' } })).toMatchObject([
      { type: 'session.started', client_event_id: 's1', session: { id: 'sess_1', delegation: { type: 'client' } } },
    ]);
    expect(dialect.started).toBe(true);
  });

  it('refuses what it does not run, with a code: unsupported events, other delegation targets, early events', () => {
    const fresh = new LiveDialect({ nowMs: () => 0 });
    expect(fresh.inbound('{"type":"session.input_audio.append","audio":""}')).toMatchObject({
      kind: 'error',
      error: { code: 'invalid_event' },
    });
    expect(fresh.inbound(start({ delegation: { type: 'responses' } }))).toMatchObject({
      kind: 'error',
      error: { code: 'unsupported_feature', param: 'session.delegation.type' },
    });
    expect(fresh.inbound('{"type":"decision.create","event_id":"d1"}')).toMatchObject({
      kind: 'error',
      error: { code: 'unsupported_feature' },
      clientEventId: 'd1',
    });
    expect(fresh.inbound('{"type":"session.nonsense"}')).toMatchObject({ error: { code: 'unknown_event_type' } });
    expect(fresh.inbound('not json')).toMatchObject({ error: { code: 'invalid_json' } });
  });

  it("turns a delegation's result into its function_call_output, and acknowledges commentary once it is in", () => {
    const { dialect } = started();
    const commentary = dialect.inbound(
      JSON.stringify({
        type: 'session.commentary.append',
        event_id: 'c1',
        content: 'It ships Friday.',
        delegation_id: 'call_w1',
      }),
    );
    expect(commentary).toMatchObject({
      kind: 'forward',
      events: [
        {
          type: 'conversation.item.create',
          item: { type: 'function_call_output', call_id: 'call_w1', output: 'It ships Friday.' },
        },
      ],
    });
    const item = { type: 'function_call_output', call_id: 'call_w1' };
    expect(dialect.outbound({ type: 'conversation.item.done', event_id: 'e2', item })).toMatchObject([
      { type: 'session.commentary.appended', client_event_id: 'c1', start_ms: 1500 },
    ]);
    expect(
      dialect.outbound({
        type: 'venus.function_call',
        event_id: 'e3',
        call_id: 'call_w2',
        work_id: 'w2',
        arguments: '{"query":"where is it"}',
      }),
    ).toMatchObject([
      {
        type: 'session.delegation.created',
        delegation: { id: 'call_w2', target: 'client' },
        venus: { query: 'where is it' },
      },
    ]);
  });

  it("names the client's own event id on errors of the events it was translated to", () => {
    const { dialect } = started();
    const inbound = dialect.inbound(
      JSON.stringify({ type: 'session.input_audio.append', event_id: 'a1', audio: '%%' }),
    );
    const forwarded = inbound.kind === 'forward' ? String(inbound.events[0]?.event_id) : '';
    const error = {
      type: 'error',
      event_id: 'e9',
      error: { code: 'audio_wrong_format', message: 'bad', event_id: forwarded },
    };
    expect(dialect.outbound(error)).toEqual([
      {
        type: 'error',
        event_id: 'e9',
        client_event_id: 'a1',
        error: { code: 'audio_wrong_format', message: 'bad', client_event_id: 'a1' },
      },
    ]);
  });
});
