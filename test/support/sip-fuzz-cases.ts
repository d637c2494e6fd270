/**
 * Seeded generators of malformed and mutated SIP messages and RTP packets for the SIP bridge's
 * fuzz test. Every case says what the bridge owes it, judged from the mutation applied (not from the
 * bridge's own parser):
 * - `malformed`: the request line and the mandatory headers (Via, From, To, Call-ID, CSeq) are
 *   readable but something else is wrong: a 400-class answer is due;
 * - `valid`: a well-formed request (unknown methods, odd bytes in optional headers, an extra Via):
 *   a final answer is due (`statuses` lists the ones allowed);
 * - `none`: nothing to answer (truncated before the headers end, garbage, no Call-ID, ...); if an
 *   answer comes anyway it must not be a 2xx.
 */

/** mulberry32, seeded with a 32-bit number: reproducible draws for a printed seed. */
export function seeded(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SipFuzzCase {
  kind: string;
  bytes: Buffer;
  /** The top Via branch, unique per case: how answers are matched to cases. */
  branch: string;
  method: string;
  due: 'malformed' | 'valid' | 'none';
  /**
   * False where a byte stream (TCP) cannot owe an answer: a message cut short, or a Content-Length
   * past its body, is waiting for bytes that never come (the connection closes first).
   */
  streamDue?: false;
  /** For `valid`: the answers allowed. */
  statuses?: number[];
}

export interface SipTarget {
  /** host:port of the bridge. */
  bridge: string;
  /** Where we send from: goes in Via and Contact. */
  local: string;
  transport: 'UDP' | 'TCP';
}

const SDP = [
  'v=0',
  'o=fuzz 1 1 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 40000 RTP/AVP 0 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  '',
].join('\r\n');

const BAD_SDP = [
  'v=0\r\no=x 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 18 96\r\na=rtpmap:96 opus/48000\r\n',
  'v=0\r\ns=-\r\nt=0 0\r\nm=video 40000 RTP/AVP 96\r\n',
  'v=0\r\nc=IN IP6 ::1\r\nm=audio 40000 RTP/AVP 0\r\n',
  'v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 99999999 RTP/AVP 0\r\n',
  '\u0000\u00ff\u00fe garbage that is not SDP at all',
  'v=0\r\nc=IN IP4 999.1.2.3.4.5\r\nm=audio 40000 RTP/AVP 8\r\n',
];

interface Parts {
  bridge: string;
  startLine: string;
  mandatory: [string, string][];
  optional: [string, string][];
  body: string;
}

export class SipFuzzer {
  readonly #draw: () => number;
  #n = 0;

  constructor(seed: number) {
    this.#draw = seeded(seed);
  }

  int(n: number): number {
    return Math.floor(this.#draw() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** One case: a base request (INVITE, REGISTER, OPTIONS, BYE) with one mutation applied. */
  next(target: SipTarget): SipFuzzCase {
    this.#n += 1;
    const branch = `z9hG4bK-fuzz-${this.#n}-${this.int(1e9)}`;
    const method = this.pick(['INVITE', 'INVITE', 'REGISTER', 'OPTIONS', 'BYE']);
    const parts = this.#base(method, branch, target);
    const mutation = this.pick(MUTATIONS);
    return { ...mutation(this, parts, method), branch, method: parts.startLine.split(' ')[0]! };
  }

  #base(method: string, branch: string, target: SipTarget): Parts {
    // INVITEs go to a route behind digest auth (401, no call opened) or to an unknown number (404).
    const user = method === 'INVITE' ? this.pick(['fuzz', 'nobody']) : 'fuzz';
    const uri = method === 'REGISTER' ? `sip:${target.bridge}` : `sip:${user}@${target.bridge}`;
    const body = method === 'INVITE' ? SDP : '';
    return {
      bridge: target.bridge,
      startLine: `${method} ${uri} SIP/2.0`,
      mandatory: [
        ['Via', `SIP/2.0/${target.transport} ${target.local};branch=${branch};rport`],
        ['From', `<sip:fuzzer@${target.local}>;tag=f${this.int(1e9)}`],
        ['To', method === 'BYE' ? `<sip:${user}@${target.bridge}>;tag=gone` : `<sip:${user}@${target.bridge}>`],
        ['Call-ID', `fuzz-${branch}`],
        ['CSeq', `${1 + this.int(1000)} ${method}`],
      ],
      optional: [
        ['Max-Forwards', '70'],
        ['Contact', `<sip:fuzzer@${target.local}>`],
        ...(body ? ([['Content-Type', 'application/sdp']] as [string, string][]) : []),
      ],
      body,
    };
  }
}

type Mutation = (f: SipFuzzer, p: Parts, method: string) => Omit<SipFuzzCase, 'branch' | 'method'>;

function render(p: Parts, contentLength: string | null = String(Buffer.byteLength(p.body, 'latin1'))): Buffer {
  const lines = [p.startLine, ...[...p.mandatory, ...p.optional].map(([n, v]) => `${n}: ${v}`)];
  if (contentLength !== null) lines.push(`Content-Length: ${contentLength}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${p.body}`, 'latin1');
}

function validAnswers(method: string): number[] {
  return { INVITE: [401, 404], REGISTER: [405], OPTIONS: [200], BYE: [481] }[method] ?? [];
}

const noise = (f: SipFuzzer, n: number) =>
  Buffer.from(Array.from({ length: n }, () => f.pick([0, 0x80, 0xff, 0xc3, 0x1b, 0x7f, 0xfe]) + 0)).toString('latin1');

const MUTATIONS: Mutation[] = [
  // Cut short: before the blank line nothing is answerable; inside a body the Content-Length lies.
  (f, p) => {
    const whole = render(p);
    const headEnd = whole.indexOf('\r\n\r\n') + 4;
    const at = 1 + f.int(whole.length - 1);
    return {
      kind: 'truncated',
      bytes: whole.subarray(0, at),
      due: at >= headEnd && p.body.length > 0 ? 'malformed' : 'none',
      streamDue: false,
    };
  },
  // A second, different From/To/Call-ID/CSeq/Content-Length.
  (f, p) => {
    const name = f.pick(['From', 'To', 'Call-ID', 'CSeq', 'Content-Length']);
    const len = Buffer.byteLength(p.body, 'latin1');
    const value = name === 'Content-Length' ? String(len + 1 + f.int(50)) : `${f.int(1e6)} dup`;
    const dup = name === 'CSeq' ? `${f.int(1e6)} ${p.startLine.split(' ')[0]}` : value;
    return {
      kind: 'duplicated header',
      bytes: render({ ...p, optional: [...p.optional, [name, dup]] }),
      due: 'malformed',
    };
  },
  // An extra Via (a request that came through a proxy) is well formed.
  (f, p, method) => ({
    kind: 'extra Via',
    bytes: render({
      ...p,
      mandatory: [...p.mandatory, ['Via', `SIP/2.0/UDP 10.0.0.${f.int(255)}:5060;branch=z9hG4bK${f.int(1e9)}`]],
    }),
    due: 'valid',
    statuses: validAnswers(method),
  }),
  // Content-Length that is huge, negative or not a number.
  (f, p) => ({
    kind: 'bad Content-Length',
    bytes: render(p, f.pick(['99999999', '4294967296', '-1', 'abc', '1e3', '20000'])),
    due: 'malformed',
  }),
  // Content-Length larger than the body.
  (f, p) => ({
    kind: 'Content-Length past the body',
    bytes: render(p, String(p.body.length + 1 + f.int(5000))),
    due: 'malformed',
    streamDue: false,
  }),
  // An INVITE whose SDP offers nothing we can take, to a route that does not ask for auth: 488.
  (f, p) => {
    const body = f.pick(BAD_SDP);
    const invite: Parts = {
      ...p,
      startLine: `INVITE sip:sdp@${p.bridge} SIP/2.0`,
      mandatory: p.mandatory.map(([n, v]) => (n === 'CSeq' ? [n, '1 INVITE'] : [n, v.replace(';tag=gone', '')])),
      optional: [...p.optional.filter(([n]) => n !== 'Content-Type'), ['Content-Type', 'application/sdp']],
      body,
    };
    return { kind: 'bad SDP', bytes: render(invite), due: 'malformed' };
  },
  // A method nobody defined (CSeq matching): 501.
  (f, p) => {
    const name = `X${Array.from({ length: 1 + f.int(12) }, () => String.fromCharCode(65 + f.int(26))).join('')}`;
    return {
      kind: 'unknown method',
      bytes: render({
        ...p,
        startLine: p.startLine.replace(/^\S+/, name),
        mandatory: p.mandatory.map(([n, v]) => (n === 'CSeq' ? [n, `7 ${name}`] : [n, v])),
      }),
      due: 'valid',
      statuses: [501],
    };
  },
  // Odd bytes (NUL, high bit, escape) in an optional header's value: still a request.
  (f, p, method) => ({
    kind: 'bad encoding in a value',
    bytes: render({ ...p, optional: [...p.optional, ['Subject', `caf${noise(f, 1 + f.int(20))}`]] }),
    due: 'valid',
    statuses: validAnswers(method),
  }),
  // Odd bytes in a header name: a malformed header line in an otherwise readable request.
  (f, p) => ({
    kind: 'bad encoding in a name',
    bytes: render({ ...p, optional: [...p.optional, [`X-${noise(f, 1 + f.int(5))}`, 'v']] }),
    due: 'malformed',
  }),
  // Odd bytes in the request line or a mandatory header: nothing owed.
  (f, p) => {
    const whole = render(p);
    const lineEnd = whole.indexOf('\r\n\r\n');
    const copy = Buffer.from(whole);
    for (let i = 0; i < 1 + f.int(4); i++) copy[f.int(lineEnd)] = f.pick([0, 0x20, 0x3a, 0xff, 0x0a]);
    return { kind: 'flipped bytes', bytes: copy, due: 'none' };
  },
  // Too big: a header line past 8 KiB, more than 100 header lines, a body past 16 KiB.
  (f, p) => {
    const which = f.int(3);
    if (which === 0)
      return {
        kind: 'oversized header line',
        bytes: render({ ...p, optional: [...p.optional, ['Subject', 'a'.repeat(9000 + f.int(20_000))]] }),
        due: 'malformed',
      };
    if (which === 1) {
      const many = Array.from({ length: 101 + f.int(200) }, (_, i) => [`X-H${i}`, 'v'] as [string, string]);
      return {
        kind: 'too many headers',
        bytes: render({ ...p, optional: [...p.optional, ...many] }),
        due: 'malformed',
      };
    }
    return {
      kind: 'oversized body',
      bytes: render({ ...p, body: 'b'.repeat(17_000 + f.int(40_000)) }),
      due: 'malformed',
    };
  },
  // CSeq naming another method, or not a number.
  (f, p) => ({
    kind: 'bad CSeq',
    bytes: render({
      ...p,
      mandatory: p.mandatory.map(([n, v]) =>
        n === 'CSeq' ? [n, f.pick(['1 NOTIFY', 'x INVITE', '99999999999 BYE', '1'])] : [n, v],
      ),
    }),
    due: 'malformed',
  }),
  // A mandatory header left out: not answerable.
  (f, p) => {
    const drop = f.pick(['From', 'To', 'Call-ID', 'CSeq', 'Via']);
    return {
      kind: 'missing header',
      bytes: render({ ...p, mandatory: p.mandatory.filter(([n]) => n !== drop) }),
      due: 'none',
    };
  },
  // Garbage.
  (f) => ({ kind: 'garbage', bytes: Buffer.from(noise(f, 1 + f.int(1400)), 'latin1'), due: 'none' }),
  // The unmutated request (a control: it is answered as usual).
  (_f, p, method) => ({ kind: 'unmutated', bytes: render(p), due: 'valid', statuses: validAnswers(method) }),
];

/**
 * RTP packets that lie: bad versions, payload types we did not offer (or over 127), sequence and
 * timestamp jumps, truncated headers, CSRC counts and extension lengths past the packet, a
 * different SSRC, oversized payloads. Some are well formed (they must be played or refused, never
 * crash the leg).
 */
export function rtpCase(
  f: SipFuzzer,
  state: { seq: number; ts: number; ssrc: number },
): { kind: string; bytes: Buffer } {
  const payload = Buffer.alloc(160, 0xff);
  const header = Buffer.alloc(12);
  const make = (over: {
    v?: number;
    pt?: number;
    cc?: number;
    x?: boolean;
    seq?: number;
    ts?: number;
    ssrc?: number;
  }) => {
    header[0] = ((over.v ?? 2) << 6) | (over.x ? 0x10 : 0) | ((over.cc ?? 0) & 0x0f);
    header[1] = (over.pt ?? 0) & 0xff;
    header.writeUInt16BE((over.seq ?? state.seq) & 0xffff, 2);
    header.writeUInt32BE((over.ts ?? state.ts) >>> 0, 4);
    header.writeUInt32BE((over.ssrc ?? state.ssrc) >>> 0, 8);
    return Buffer.from(header);
  };
  state.seq = (state.seq + 1) & 0xffff;
  state.ts = (state.ts + 160) >>> 0;
  switch (f.int(10)) {
    case 0:
      return { kind: 'bad version', bytes: Buffer.concat([make({ v: f.pick([0, 1, 3]) }), payload]) };
    case 1:
      return {
        kind: 'payload type',
        bytes: Buffer.concat([make({ pt: f.pick([8, 18, 96, 127, 128 + f.int(128), 255]) }), payload]),
      };
    case 2: {
      state.seq = (state.seq + f.int(65_536)) & 0xffff;
      state.ts = (state.ts + f.int(2 ** 32)) >>> 0;
      return { kind: 'sequence/timestamp jump', bytes: Buffer.concat([make({}), payload]) };
    }
    case 3:
      return { kind: 'truncated header', bytes: make({}).subarray(0, f.int(12)) };
    case 4:
      return {
        kind: 'CSRC count lie',
        bytes: Buffer.concat([make({ cc: 1 + f.int(15) }), payload.subarray(0, f.int(40))]),
      };
    case 5: {
      const ext = Buffer.from([0xbe, 0xde, 0xff, 0xff]);
      return {
        kind: 'extension length lie',
        bytes: Buffer.concat([make({ x: true }), ext, payload.subarray(0, f.int(20))]),
      };
    }
    case 6:
      return { kind: 'wrong SSRC', bytes: Buffer.concat([make({ ssrc: f.int(2 ** 32) }), payload]) };
    case 7:
      return { kind: 'oversized payload', bytes: Buffer.concat([make({}), Buffer.alloc(481 + f.int(1000), 0x7f)]) };
    case 8:
      return {
        kind: 'telephone-event lie',
        bytes: Buffer.concat([make({ pt: 101 }), Buffer.from([f.int(256), f.int(256)])]),
      };
    default:
      return { kind: 'well formed', bytes: Buffer.concat([make({}), payload]) };
  }
}
