import { type EdgeToWorkerFrame, type ErrorCode, encodeRelayFrame } from '@venus/protocol';
import fc from 'fast-check';

/**
 * Generators for test/protocol-fuzz.fuzz.ts (`npm run fuzz`). Every client case says, by construction, what the edge
 * must answer: nothing (`expect: null`, a valid event, extra fields included), or exactly one `error`
 * whose code is one of `expect` and whose `event_id` is the event's own id (`withId`) or null (no id,
 * a non-string id, or no JSON object to take it from). No oracle re-parses the event: a mutation is
 * chosen so that it is bad whatever else the event holds.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

export interface ClientCase {
  /** What goes on the socket: text is sent as a text frame, bytes as a binary frame. */
  wire: (id: string) => string | Uint8Array;
  /** The error codes accepted for this case; null when it must be answered without an error. */
  expect: readonly ErrorCode[] | null;
  /** Whether the error must carry the case's id (otherwise `event_id: null`). */
  withId: boolean;
  /** A short name of what was generated, for failure reports. */
  what: string;
  /** Appended to the harness's id before it is placed (an id too long to be valid is still named back). */
  idSuffix?: string;
}

const INVALID: readonly ErrorCode[] = ['invalid_event'];
/** Deep nesting may be refused by the JSON parser (invalid_json) or by the schema (invalid_event). */
const DEEP: readonly ErrorCode[] = ['invalid_event', 'invalid_json'];

/** `depth` nested arrays around a number, built as text (JSON.stringify would recurse). */
export function deepJson(depth: number, open = '[', close = ']'): string {
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

const shortText = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const hugeLength = fc.integer({ min: 20_001, max: 120_000 });
const huge = (n: number) => 'x'.repeat(n);
/** Values of a JSON type other than string, for fields that must be strings. */
const notString: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);
/** Values of a JSON type other than number. */
const notNumber: fc.Arbitrary<Json> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant<Json>([]),
);
/** Extra top-level fields: tolerated (clients send more than we read). Prefixed so they name no real field. */
const extras = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }).map((k) => `x_${k}`),
  fc.oneof(anyJson, fc.constant({ nested: { deeper: [1, 2, { deepest: 'y' }] } })),
  { maxKeys: 3 },
);

/** Silence (zero samples) as pcm16 base64: no speech for the voice activity detector, little audio budget. */
const silentAudio = fc.integer({ min: 0, max: 240 }).map((samples) => Buffer.alloc(samples * 2).toString('base64'));
const voice = fc.constantFrom('en-us', 'en-gb');
const inputFormat = fc.constantFrom<Json>('pcm16', 'audio/pcm', { type: 'audio/pcm' });
const outputFormat = fc.constantFrom<Json>('pcm16', 'audio/pcm', 'g711_ulaw', 'audio/pcma', { type: 'audio/pcmu' });

/** A valid event of each type the edge accepts, without `event_id` (the harness adds it). */
const validEvents: Record<string, fc.Arbitrary<Obj>> = {
  'session.update': fc
    .record(
      {
        instructions: fc.string({ maxLength: 200 }),
        voice,
        input_audio_format: inputFormat,
        output_audio_format: outputFormat,
        modalities: fc.constant(['audio', 'text']),
        // Mapped onto the runtime's own turn taking (with a notice for approximate fields). Push to
        // talk (null) is left out: it changes what a commit means, and has its own test.
        turn_detection: fc.constantFrom<Json>(
          { type: 'server_vad', silence_duration_ms: 500 },
          { type: 'server_vad' },
          { type: 'semantic_vad', eagerness: 'auto' },
          { type: 'semantic_vad', eagerness: 'high' },
        ),
        // Function tools become the session's client functions (client-tools.ts); malformed ones are bad cases below.
        tools: fc.uniqueArray(
          fc.record({
            type: fc.constant('function'),
            name: fc.stringMatching(/^[a-z_]{1,24}$/),
            description: fc.string({ maxLength: 120 }),
            parameters: fc.constant({ type: 'object', properties: { id: { type: 'string' } } }),
          }),
          { maxLength: 2, selector: (t) => t.name },
        ),
        venus: fc.record(
          {
            // Not 40 ms: a fast chunk clock on the reference model only adds CPU load to the run.
            chunk_ms: fc.constantFrom(160, 320, 500, 1000),
            delivery_policy: fc.constantFrom('interrupt', 'when_idle', 'silent', 'skip_if_busy'),
            playback_acks: fc.boolean(),
          },
          { requiredKeys: [] },
        ),
        x_loose: anyJson,
      },
      { requiredKeys: [] },
    )
    .map((session) => ({ type: 'session.update', session })),
  'input_audio_buffer.append': silentAudio.map((audio) => ({ type: 'input_audio_buffer.append', audio })),
  'input_audio_buffer.commit': fc.constant({ type: 'input_audio_buffer.commit' }),
  'input_audio_buffer.clear': fc.constant({ type: 'input_audio_buffer.clear' }),
  'output_audio_buffer.clear': fc.constant({ type: 'output_audio_buffer.clear' }),
  // What a client asks of the next response: correlation metadata, instructions (out-of-band
  // responses are refused, a bad case below).
  'response.create': fc
    .option(
      fc.record(
        {
          metadata: fc.dictionary(fc.stringMatching(/^[a-z_]{1,16}$/), fc.string({ maxLength: 40 }), { maxKeys: 3 }),
          instructions: fc.string({ maxLength: 200 }),
          conversation: fc.constant('auto'),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    )
    .map((response) => (response === undefined ? { type: 'response.create' } : { type: 'response.create', response })),
  'response.cancel': fc
    .option(fc.string({ maxLength: 20 }), { nil: undefined })
    .map((id) => (id === undefined ? { type: 'response.cancel' } : { type: 'response.cancel', response_id: id })),
};

/** A user message: valid, and it starts a model turn, so it is generated rarely. */
/** A typed user turn, or a restored assistant or system message (history). */
const validMessage = fc.tuple(shortText, fc.constantFrom('user', 'assistant', 'system')).map(([text, role]) => ({
  type: 'conversation.item.create',
  item: { type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] },
}));

/** Mutations of one event type that make it bad whatever else it holds, with the codes that may answer. */
interface Bad {
  event: Obj;
  expect: readonly ErrorCode[];
  what: string;
}
const bad = (what: string, expect: readonly ErrorCode[]) => (event: Obj) => ({ event, expect, what });

const specificBad: fc.Arbitrary<Bad>[] = [
  // input_audio_buffer.append
  fc.constant({ type: 'input_audio_buffer.append' }).map(bad('append without audio', INVALID)),
  notString
    .map((audio) => ({ type: 'input_audio_buffer.append', audio }))
    .map(bad('append audio not a string', INVALID)),
  fc
    .tuple(silentAudio, fc.nat(), fc.constantFrom('!', '-', '_', '*', ' ', '\n', '\u00e9', '=A'))
    .map(([audio, at, junk]) => {
      const i = audio.length === 0 ? 0 : at % audio.length;
      return { type: 'input_audio_buffer.append', audio: `${audio.slice(0, i)}${junk}${audio.slice(i)}` };
    })
    .map(bad('append invalid base64', ['audio_wrong_format'])),
  fc
    .integer({ min: 0, max: 100 })
    .map((k) => ({ type: 'input_audio_buffer.append', audio: `${'A'.repeat(4 * k)}A` }))
    .map(bad('append base64 of impossible length', ['audio_wrong_format'])),
  fc
    .integer({ min: 0, max: 200 })
    .map((k) => ({ type: 'input_audio_buffer.append', audio: Buffer.alloc(2 * k + 1).toString('base64') }))
    .map(bad('append odd pcm16 byte count', ['audio_wrong_format'])),
  // 10 s of 24 kHz pcm16 is the largest append; this is a little over (in base64, ~650 kB).
  fc
    .integer({ min: 1, max: 10_000 })
    .map((extra) => ({ type: 'input_audio_buffer.append', audio: 'A'.repeat(640_000 + 4 * extra) }))
    .map(bad('append over the size limit', ['audio_too_large'])),
  // session.update
  fc.constant({ type: 'session.update' }).map(bad('session.update without session', INVALID)),
  fc
    .array(fc.oneof(notString, fc.record({ type: fc.constantFrom('mcp', 'file_search', 'x') })), {
      minLength: 1,
      maxLength: 2,
    })
    .map((tools) => ({ type: 'session.update', session: { tools } }))
    .map(bad('session.update tools that are not function tools', ['invalid_event', 'unsupported_feature'])),
  notString
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map((session) => ({ type: 'session.update', session }))
    .map(bad('session.update session not an object', INVALID)),
  hugeLength
    .map((n) => ({ type: 'session.update', session: { instructions: huge(n) } }))
    .map(bad('instructions over 20000', INVALID)),
  fc
    .oneof(fc.integer({ min: 65, max: 5000 }).map(huge), fc.constant(''), notString)
    .map((v) => ({ type: 'session.update', session: { voice: v } }))
    .map(bad('bad voice', INVALID)),
  fc
    .oneof(fc.integer({ min: 2001, max: 1e9 }), fc.integer({ min: -1e9, max: 39 }), fc.constant(160.5), notNumber)
    .map((chunk) => ({ type: 'session.update', session: { venus: { chunk_ms: chunk } } }))
    .map(bad('chunk_ms out of range', INVALID)),
  fc
    .string({ maxLength: 12 })
    .filter((p) => !['interrupt', 'when_idle', 'silent', 'skip_if_busy'].includes(p))
    .map((p) => ({ type: 'session.update', session: { venus: { delivery_policy: p } } }))
    .map(bad('unknown delivery_policy', INVALID)),
  fc
    .string({ maxLength: 12 })
    .map((f) => ({ type: 'session.update', session: { input_audio_format: `fuzz/${f}` } }))
    .map(bad('unknown audio format', INVALID)),
  fc
    .constantFrom(8000, 16000, 44100, 48000)
    .map((rate) => ({ type: 'session.update', session: { audio: { input: { format: { type: 'audio/pcm', rate } } } } }))
    .map(bad('audio format at a wrong rate', ['audio_wrong_format'])),
  fc
    .oneof(
      notString.filter((v) => v !== null && (typeof v !== 'object' || Array.isArray(v))),
      fc.string({ maxLength: 12 }),
      fc
        .string({ maxLength: 12 })
        .filter((t) => t !== 'server_vad' && t !== 'semantic_vad')
        .map((type) => ({ type })),
    )
    .map((turn_detection) => ({ type: 'session.update', session: { turn_detection } }))
    .map(bad('turn_detection neither null nor server_vad nor semantic_vad', INVALID)),
  fc
    .oneof(
      notString.filter((v) => v !== null && v !== undefined && (typeof v !== 'object' || Array.isArray(v))),
      fc.constant({ conversation: 'none' }),
    )
    .map((response) => ({ type: 'response.create', response }))
    .map(bad('response.create response not an object, or out of band', ['invalid_event', 'unsupported_feature'])),
  fc.integer({ min: 200, max: 20_000 }).map((d) => ({
    event: { __raw: `{"type":"session.update","session":{"modalities":${deepJson(d)}}}` },
    expect: DEEP,
    what: `modalities nested ${d} deep`,
  })),
  // conversation.item.create
  fc.constant({ type: 'conversation.item.create' }).map(bad('item.create without item', INVALID)),
  fc
    .constantFrom('function_call', 'function_call_output', 'fuzz')
    .map((t) => ({
      type: 'conversation.item.create',
      item: { type: t, role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    }))
    .map(bad('item of a type other than message', INVALID)),
  fc
    .constantFrom('assistant', 'tool', '')
    .map((role) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role, content: [{ type: 'input_text', text: 'hi' }] },
    }))
    .map(bad('item role unknown, or an assistant message holding input_text', INVALID)),
  shortText
    .map((text) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'system', content: [{ type: 'output_text', text }] },
    }))
    .map(bad('system message holding output_text', INVALID)),
  fc
    .constantFrom('output_audio', 'audio')
    .map((type) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'assistant', content: [{ type, audio: 'AAAA' }] },
    }))
    .map(bad('assistant audio without a transcript', ['unsupported_feature'])),
  fc
    .constant({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [] } })
    .map(bad('empty content', INVALID)),
  fc
    .constantFrom(' ', '\n\t', '   ')
    .map((text) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
    }))
    .map(bad('blank text', INVALID)),
  fc
    .constant({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: 'AAAA' }] },
    })
    .map(bad('input_audio content', ['unsupported_feature'])),
  hugeLength
    .map((n) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: huge(n) }] },
    }))
    .map(bad('text over 20000', INVALID)),
  fc
    .integer({ min: 129, max: 4000 })
    .map((n) => ({
      type: 'conversation.item.create',
      item: { id: huge(n), type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    }))
    .map(bad('item id over 128', INVALID)),
  fc
    .string({ maxLength: 12 })
    .map((p) => ({
      type: 'conversation.item.create',
      previous_item_id: `item_fuzz_nowhere_${p}`,
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    }))
    .map(bad('placement other than the end', ['unsupported_feature'])),
  fc
    .constantFrom('audio', 'image', 42, null)
    .map((t) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: t, text: 'hi' }] },
    }))
    .map(bad('unknown content part type', INVALID)),
  // conversation.item.retrieve / delete / truncate, playback acks, work cancels
  fc
    .tuple(fc.constantFrom('conversation.item.retrieve', 'conversation.item.delete'), fc.string({ maxLength: 16 }))
    .map(([type, id]) => ({ type, item_id: `item_fuzz_unknown_${id}` }))
    .map(bad('unknown item', ['wrong_session'])),
  fc
    .tuple(
      fc.constantFrom('conversation.item.retrieve', 'conversation.item.delete'),
      fc.oneof(notString, fc.integer({ min: 129, max: 2000 }).map(huge)),
    )
    .map(([type, id]) => ({ type, item_id: id }))
    .map(bad('item_id not a short string', INVALID)),
  fc
    .tuple(fc.string({ maxLength: 16 }), fc.nat(100_000))
    .map(([id, ms]) => ({
      type: 'conversation.item.truncate',
      item_id: `utt_fuzz_${id}`,
      content_index: 0,
      audio_end_ms: ms,
    }))
    .map(bad('truncate unknown item', ['wrong_session'])),
  fc
    .oneof(fc.integer({ min: -1e6, max: -1 }), fc.constant(1.5), notNumber)
    .map((ms) => ({ type: 'conversation.item.truncate', item_id: 'utt_x', content_index: 0, audio_end_ms: ms }))
    .map(bad('truncate audio_end_ms not a natural number', INVALID)),
  fc
    .constant({ type: 'conversation.item.truncate', content_index: 0, audio_end_ms: 5 })
    .map(bad('truncate without item_id', INVALID)),
  fc
    .tuple(fc.string({ maxLength: 16 }), fc.nat(100_000))
    .map(([id, ms]) => ({ type: 'venus.playback.ack', item_id: `utt_fuzz_${id}`, played_ms: ms }))
    .map(bad('ack for an unknown item', ['wrong_session'])),
  fc
    .oneof(fc.double({ min: -1e9, max: -0.001, noNaN: true }), notNumber)
    .map((ms) => ({ type: 'venus.playback.ack', item_id: 'utt_x', played_ms: ms }))
    .map(bad('ack played_ms negative or not a number', INVALID)),
  fc
    .string({ maxLength: 16 })
    .map((id) => ({ type: 'venus.work.cancel', work_id: `work_fuzz_${id}` }))
    .map(bad('cancel of unknown work', ['work_not_found'])),
  notString.map((id) => ({ type: 'venus.work.cancel', work_id: id })).map(bad('work_id not a string', INVALID)),
  notString
    .filter((v) => v !== null)
    .map((id) => ({ type: 'response.cancel', response_id: id }))
    .map(bad('response_id not a string', INVALID)),
];

const anyValid = fc.oneof(...Object.values(validEvents));

/** Type-agnostic mutations of a valid event. */
const genericBad: fc.Arbitrary<Bad>[] = [
  fc
    .tuple(anyValid, fc.string({ maxLength: 40 }))
    .map(([e, t]) => ({ ...e, type: `fuzz.${t}` }))
    .map(bad('unknown event type', ['unknown_event_type'])),
  anyValid
    .map((e) => ({ ...e, type: 'transcription_session.update' }))
    .map(bad('unsupported event type', ['unsupported_feature'])),
  fc
    .tuple(anyValid, notString)
    .map(([e, t]) => ({ ...e, type: t }))
    .map(bad('type not a string', INVALID)),
  anyValid
    .map((e) => {
      const { type: _type, ...rest } = e;
      return rest;
    })
    .map(bad('type missing', INVALID)),
  fc
    .tuple(
      anyValid,
      fc.oneof(
        fc.string({ maxLength: 20 }).map((s) => `sess_fuzz_${s}`),
        notString,
      ),
    )
    .map(([e, s]) => ({ ...e, session_id: s }))
    .map(bad('another session named', ['wrong_session'])),
];

/** Wire forms of an event, with how its id travels. */
function onWire(gen: fc.Arbitrary<Bad | { event: Obj; expect: null; what: string }>): fc.Arbitrary<ClientCase> {
  return fc.tuple(gen, extras, fc.nat(99)).map(([{ event, expect, what }, extra, dice]): ClientCase => {
    if ('__raw' in event) {
      // Already on the wire (text too deep to stringify); the id cannot be placed in it.
      const raw = String(event.__raw);
      return { wire: () => raw, expect, withId: false, what };
    }
    const full = { ...event, ...extra };
    // One in ten events carries no id: its answer (if any) has event_id null.
    if (dice < 10) return { wire: () => JSON.stringify(full), expect, withId: false, what: `${what} (no id)` };
    return { wire: (id) => JSON.stringify({ ...full, event_id: id }), expect, withId: true, what };
  });
}

/** Messages that are not a JSON object, or not text: answered with a coded error and a null id. */
const notAnEvent: fc.Arbitrary<ClientCase> = fc.oneof(
  // A strict prefix of an object's JSON can never parse.
  fc.tuple(anyValid, fc.nat()).map(([e, cut]): ClientCase => {
    const text = JSON.stringify(e);
    return {
      wire: () => text.slice(0, cut % text.length),
      expect: ['invalid_json'],
      withId: false,
      what: 'truncated JSON',
    };
  }),
  fc
    .string({ maxLength: 60 })
    .map(
      (s): ClientCase => ({ wire: () => `\u0001${s}`, expect: ['invalid_json'], withId: false, what: 'garbage text' }),
    ),
  anyJson
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map(
      (v): ClientCase => ({
        wire: () => JSON.stringify(v),
        expect: INVALID,
        withId: false,
        what: 'JSON that is not an object',
      }),
    ),
  fc
    .integer({ min: 100, max: 50_000 })
    .map((d): ClientCase => ({ wire: () => deepJson(d), expect: DEEP, withId: false, what: `array nested ${d} deep` })),
  fc
    .uint8Array({ maxLength: 256 })
    .map((bytes): ClientCase => ({ wire: () => bytes, expect: INVALID, withId: false, what: 'binary frame' })),
  anyValid.map(
    (e): ClientCase => ({
      wire: (id) => new TextEncoder().encode(JSON.stringify({ ...e, event_id: id })),
      expect: INVALID,
      // A binary frame is not read at all, so the id inside it cannot be named.
      withId: false,
      what: 'valid event as a binary frame',
    }),
  ),
  // The id itself is bad: a number cannot be named back; one over 256 characters is named back.
  anyValid.map(
    (e): ClientCase => ({
      wire: () => JSON.stringify({ ...e, event_id: 12345 }),
      expect: INVALID,
      withId: false,
      what: 'numeric event_id',
    }),
  ),
);

const longId: fc.Arbitrary<ClientCase> = anyValid.map(
  (e): ClientCase => ({
    wire: (id) => JSON.stringify({ ...e, event_id: id }),
    expect: INVALID,
    withId: true,
    idSuffix: 'i'.repeat(300),
    what: 'event_id over 256 characters',
  }),
);

/**
 * The client case mix: about a quarter valid (a user message 1 in ~900), the rest bad in every
 * way above. Weights keep the huge cases (hundreds of kB) to a few hundred in a 100k run.
 */
export const clientCase: fc.Arbitrary<ClientCase> = fc.oneof(
  {
    weight: 250,
    arbitrary: onWire(anyValid.map((event) => ({ event, expect: null, what: `valid ${String(event.type)}` }))),
  },
  { weight: 1, arbitrary: onWire(validMessage.map((event) => ({ event, expect: null, what: 'valid message' }))) },
  { weight: 300, arbitrary: onWire(fc.oneof(...specificBad.slice(0, 5), ...specificBad.slice(6))) },
  { weight: 1, arbitrary: onWire(specificBad[5]!) },
  { weight: 200, arbitrary: onWire(fc.oneof(...genericBad)) },
  { weight: 150, arbitrary: notAnEvent },
  { weight: 20, arbitrary: longId },
);

/** The id of a huge case's wire form is still its own: the longest `wire` output is bounded (~690 kB). */
export const MAX_CASE_BYTES = 700_000;

// ---------------------------------------------------------------------------------------------
// Relay frames (edge -> worker), mutated as objects and as msgpack bytes.

export interface RelayCase {
  bytes: Uint8Array;
  /** The object before any byte mutation was made to the schema's liking (true) or broken on purpose (false). */
  validObject: boolean;
  /** Whether bytes were mutated after encoding (then only the two boundaries' agreement is known). */
  byteMutated: boolean;
  what: string;
}

const relayConfig = fc.record({
  chunkMs: fc.constantFrom(160, 320, 1000),
  deliveryPolicy: fc.constantFrom('interrupt', 'when_idle', 'silent', 'skip_if_busy' as const),
  voice: fc.constant('en-us'),
});

/** Valid frames for `live` sessions (never `close`: that would end them) or for ghost sessions that do not exist. */
export function relayFrame(live: readonly string[]): fc.Arbitrary<EdgeToWorkerFrame> {
  const session = fc.constantFrom(...live);
  const ghost = fc.string({ minLength: 1, maxLength: 12 }).map((s) => `ghost_${s}`);
  const target = fc.oneof({ weight: 9, arbitrary: session }, { weight: 1, arbitrary: ghost });
  return fc.oneof(
    fc.record({ kind: fc.constant('config' as const), session: target, config: relayConfig }),
    fc.record({
      kind: fc.constant('audio' as const),
      session: target,
      pcm16k: fc.integer({ min: 0, max: 160 }).map((n) => new Uint8Array(n * 2)),
    }),
    fc.record({ kind: fc.constant('dtmf' as const), session: target, digit: fc.constantFrom(...'0123456789*#') }),
    fc.record({
      kind: fc.constant('playback_ack' as const),
      session: target,
      utteranceId: fc.string({ maxLength: 12 }),
      playedMs: fc.nat(100_000),
      source: fc.constantFrom('client', 'estimate', 'truncate' as const),
    }),
    fc.record({ kind: fc.constant('cancel_response' as const), session: target }),
    fc.record({
      kind: fc.constant('cancel_work' as const),
      session: target,
      workId: fc.string({ maxLength: 12 }),
      eventId: fc.string({ maxLength: 12 }),
    }),
    // Open for a live session: refused as already open.
    fc.record({ kind: fc.constant('open' as const), session, tenant: fc.constant('fuzz'), config: relayConfig }),
    fc.record({ kind: fc.constant('close' as const), session: ghost, reason: fc.string({ maxLength: 12 }) }),
  );
}

/** Object mutations that the schema must refuse whatever the rest of the frame holds. */
function breakFrame(frame: EdgeToWorkerFrame): fc.Arbitrary<{ value: unknown; what: string }> {
  const obj = frame as unknown as Obj;
  const fields = Object.keys(obj).filter((k) => k !== 'kind' && !(frame.kind === 'cancel_work' && k === 'eventId'));
  return fc.oneof(
    fc.string({ maxLength: 12 }).map((k) => ({ value: { ...obj, kind: `fuzz_${k}` }, what: 'unknown kind' })),
    notString.map((k) => ({ value: { ...obj, kind: k }, what: 'kind not a string' })),
    fc.constantFrom(...fields).map((f) => {
      const { [f]: _dropped, ...rest } = obj;
      return { value: rest, what: `${frame.kind} without ${f}` };
    }),
    fc.constant({ value: { ...obj, session: '' }, what: 'empty session' }),
    fc.constant({ value: { ...obj, session: 42 }, what: 'session not a string' }),
    fc.integer({ min: 2, max: 300 }).map((d) => {
      let deep: unknown = 1;
      for (let i = 0; i < d; i += 1) deep = [deep];
      return { value: { ...obj, session: deep }, what: `session nested ${d} deep` };
    }),
    anyJson
      .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
      .map((v) => ({ value: v, what: 'not a map' })),
    fc.constant({
      value: { kind: 'text', session: obj.session, itemId: 'i', text: huge(20_001) },
      what: 'text over 20000',
    }),
    fc.constant({ value: { kind: 'text', session: obj.session, itemId: 'i', text: '' }, what: 'empty text' }),
    fc
      .constantFrom('', '12', 'ab')
      .map((digit) => ({ value: { kind: 'dtmf', session: obj.session, digit }, what: 'dtmf not one digit' })),
    fc.constant({ value: { kind: 'audio', session: obj.session, pcm16k: 'AAAA' }, what: 'audio as a string' }),
    fc.constant({
      value: { kind: 'playback_ack', session: obj.session, utteranceId: 'u', playedMs: -1, source: 'client' },
      what: 'negative playedMs',
    }),
    fc.constant({
      value: { kind: 'open', session: obj.session, tenant: 'fuzz', config: { chunkMs: 5 } },
      what: 'open with chunkMs 5',
    }),
  );
}

/** Byte mutations of an encoded frame. */
const byteMutation = fc.oneof(
  fc
    .array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 })
    .map((flips) => (b: Uint8Array) => {
      const out = b.slice();
      for (const [at, x] of flips) if (out.length > 0) out[at % out.length]! ^= x;
      return { bytes: out, what: 'flipped bytes' };
    }),
  fc.nat().map((cut) => (b: Uint8Array) => ({ bytes: b.slice(0, cut % Math.max(1, b.length)), what: 'truncated' })),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map((tail) => (b: Uint8Array) => {
    const out = new Uint8Array(b.length + tail.length);
    out.set(b);
    out.set(tail, b.length);
    return { bytes: out, what: 'trailing bytes' };
  }),
  fc.uint8Array({ maxLength: 64 }).map((random) => () => ({ bytes: random, what: 'random bytes' })),
);

/** Relay cases for the `live` sessions: a third valid (extra fields on some), a third broken objects, a third byte-mutated. */
export function relayCase(live: readonly string[], textEvery: number): fc.Arbitrary<RelayCase> {
  const valid = relayFrame(live);
  const withText = fc.oneof(
    { weight: textEvery - 1, arbitrary: valid },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        session: fc.constantFrom(...live),
        itemId: fc.string({ maxLength: 12 }),
        text: fc.constant('hello'),
      }),
    },
  );
  return fc.oneof(
    fc
      .tuple(
        withText,
        fc.dictionary(
          fc.string({ maxLength: 8 }).map((k) => `x_${k}`),
          anyJson,
          { maxKeys: 2 },
        ),
      )
      .map(([frame, extra]) => ({
        bytes: encodeRelayFrame({ ...extra, ...frame } as EdgeToWorkerFrame),
        validObject: true,
        byteMutated: false,
        what: `valid ${frame.kind}`,
      })),
    valid.chain(breakFrame).map(({ value, what }) => ({
      bytes: encodeRelayFrame(value as EdgeToWorkerFrame),
      validObject: false,
      byteMutated: false,
      what,
    })),
    fc.tuple(valid, byteMutation).map(([frame, mutate]) => {
      const { bytes, what } = mutate(encodeRelayFrame(frame));
      return { bytes, validObject: true, byteMutated: true, what: `${frame.kind}: ${what}` };
    }),
  );
}
