/**
 * SIP messages (RFC 3261 §7): parsing with limits, and serialising. Header names are kept in their
 * long, lower-case form (compact forms such as `v`, `i`, `l` are expanded), values as received.
 * Written here rather than taken from the npm `sip` package: see docs/telephony-sip.md.
 *
 * Limits (each refusal names what was wrong and carries the status to answer with):
 * - a message at most {@link SIP_LIMITS.maxMessageBytes} (64 KiB), a header line at most 8 KiB,
 *   at most 100 header lines, a body at most 16 KiB;
 * - Content-Length must be a decimal number no larger than the body received (UDP) and is required
 *   on stream transports (TCP framing, see stream-framer.ts);
 * - a request needs Via, From, To, Call-ID, CSeq, and a CSeq whose method matches the request line.
 */

export const SIP_LIMITS = {
  maxMessageBytes: 64 * 1024,
  maxHeaderLineBytes: 8 * 1024,
  maxHeaders: 100,
  maxBodyBytes: 16 * 1024,
} as const;

export type SipHeaders = [name: string, value: string][];

export interface SipRequest {
  kind: 'request';
  method: string;
  uri: string;
  headers: SipHeaders;
  body: string;
}

export interface SipResponse {
  kind: 'response';
  status: number;
  reason: string;
  headers: SipHeaders;
  body: string;
}

export type SipMessage = SipRequest | SipResponse;

export type ParseResult =
  | { ok: true; message: SipMessage }
  /** `request` is set when enough was read to answer (status 400-class) rather than drop. */
  | { ok: false; status: number; reason: string; request?: SipRequest };

const COMPACT: Record<string, string> = {
  i: 'call-id',
  f: 'from',
  t: 'to',
  v: 'via',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
  k: 'supported',
  s: 'subject',
  e: 'content-encoding',
  o: 'event',
};

const REQUIRED = ['via', 'from', 'to', 'call-id', 'cseq'] as const;
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

export function headerName(name: string): string {
  const lower = name.trim().toLowerCase();
  return COMPACT[lower] ?? lower;
}

/** The first value of a header, or undefined. */
export function header(message: Pick<SipMessage, 'headers'>, name: string): string | undefined {
  const wanted = headerName(name);
  for (const [n, v] of message.headers) if (n === wanted) return v;
  return undefined;
}

/** Every value of a header, in order (comma-joined values are not split). */
export function headers(message: Pick<SipMessage, 'headers'>, name: string): string[] {
  const wanted = headerName(name);
  return message.headers.filter(([n]) => n === wanted).map(([, v]) => v);
}

/** CSeq as number and method, or undefined when malformed. */
export function cseq(message: Pick<SipMessage, 'headers'>): { seq: number; method: string } | undefined {
  const match = /^\s*(\d{1,10})\s+([A-Za-z]+)\s*$/.exec(header(message, 'cseq') ?? '');
  if (match === null) return undefined;
  const seq = Number(match[1]);
  return seq < 2 ** 31 ? { seq, method: match[2]!.toUpperCase() } : undefined;
}

/** The `tag` parameter of a From/To value (outside any <...>), or undefined. */
export function tagOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const outside = value.includes('>') ? value.slice(value.lastIndexOf('>') + 1) : value;
  return /;\s*tag=([^;\s,]+)/i.exec(outside)?.[1];
}

/** The top Via's branch, sent-by host and port, and transport. */
export function topVia(
  message: Pick<SipMessage, 'headers'>,
): { transport: string; host: string; port: number | undefined; branch: string | undefined } | undefined {
  const first = header(message, 'via')?.split(',')[0];
  const match = /^\s*SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+([^;:\s]+|\[[^\]]+\])(?::(\d+))?\s*(.*)$/i.exec(first ?? '');
  if (match === null) return undefined;
  return {
    transport: match[1]!.toUpperCase(),
    host: match[2]!,
    port: match[3] === undefined ? undefined : Number(match[3]),
    branch: /;\s*branch=([^;\s]+)/i.exec(match[4] ?? '')?.[1],
  };
}

/** The user part of a sip:/sips:/tel: URI (the dialled number), or undefined. */
export function uriUser(uri: string): string | undefined {
  const inner = /<([^>]*)>/.exec(uri)?.[1] ?? uri;
  const match = /^\s*(?:sips?:([^@;>]+)@|tel:([^;>]+))/i.exec(inner);
  const user = match?.[1] ?? match?.[2];
  return user === undefined ? undefined : decodeURIComponent(user.split(':')[0]!);
}

/** Parses one datagram (or one framed stream message). Never throws. */
export function parseMessage(bytes: Buffer): ParseResult {
  if (bytes.length > SIP_LIMITS.maxMessageBytes) return { ok: false, status: 413, reason: 'message too large' };
  const text = bytes.toString('latin1');
  let split = text.indexOf('\r\n\r\n');
  let separator = 4;
  if (split < 0) {
    split = text.indexOf('\n\n');
    separator = 2;
  }
  if (split < 0) return { ok: false, status: 400, reason: 'no blank line after the headers' };
  const lines = unfold(text.slice(0, split).split(/\r?\n/));
  const start = parseStartLine(lines.shift() ?? '');
  if (start === undefined) return { ok: false, status: 400, reason: 'malformed start line' };
  // A bad header line is reported once the others are read: a request whose mandatory headers are
  // fine can still be answered (400, naming the line). Only the first maxHeaders lines are read.
  let headerError = lines.length > SIP_LIMITS.maxHeaders ? 'too many header lines' : undefined;
  const parsedHeaders: SipHeaders = [];
  for (const line of lines.slice(0, SIP_LIMITS.maxHeaders)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (line.length > SIP_LIMITS.maxHeaderLineBytes)
      headerError ??= `header line too long "${printable(line.slice(0, 40))}"`;
    else if (!TOKEN.test(name)) headerError ??= `malformed header line "${printable(line.slice(0, 40))}"`;
    else parsedHeaders.push([headerName(name), line.slice(colon + 1).trim()]);
  }
  const rawBody = text.slice(split + separator);
  const partial: SipMessage =
    start.kind === 'request'
      ? { kind: 'request', method: start.method, uri: start.uri, headers: parsedHeaders, body: '' }
      : { kind: 'response', status: start.status, reason: start.reason, headers: parsedHeaders, body: '' };
  const fail = (status: number, reason: string): ParseResult =>
    partial.kind === 'request' && answerable(partial)
      ? { ok: false, status, reason, request: partial }
      : { ok: false, status, reason };
  if (headerError !== undefined) return fail(400, headerError);
  const lengths = headers(partial, 'content-length');
  if (lengths.length > 1 && new Set(lengths).size > 1) return fail(400, 'conflicting Content-Length headers');
  let body = rawBody;
  if (lengths[0] !== undefined) {
    if (!/^\d{1,9}$/.test(lengths[0])) return fail(400, 'Content-Length is not a number');
    const length = Number(lengths[0]);
    if (length > SIP_LIMITS.maxBodyBytes) return fail(413, 'Content-Length too large');
    if (length > rawBody.length) return fail(400, 'Content-Length larger than the body received');
    body = rawBody.slice(0, length);
  }
  if (body.length > SIP_LIMITS.maxBodyBytes) return fail(413, 'body too large');
  partial.body = body;
  for (const name of REQUIRED) {
    if (header(partial, name) === undefined) return fail(400, `missing ${name} header`);
  }
  for (const name of ['call-id', 'cseq', 'from', 'to'] as const) {
    if (headers(partial, name).length > 1) return fail(400, `duplicate ${name} header`);
  }
  const seq = cseq(partial);
  if (seq === undefined) return fail(400, 'malformed CSeq');
  if (topVia(partial) === undefined) return fail(400, 'malformed Via');
  if (partial.kind === 'request' && seq.method !== partial.method)
    return fail(400, 'CSeq method differs from the request');
  return { ok: true, message: partial };
}

export function serialise(message: SipMessage): Buffer {
  const start =
    message.kind === 'request'
      ? `${message.method} ${message.uri} SIP/2.0`
      : `SIP/2.0 ${message.status} ${message.reason}`;
  const lines = [start];
  for (const [name, value] of message.headers) if (name !== 'content-length') lines.push(`${display(name)}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(message.body, 'latin1')}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${message.body}`, 'latin1');
}

/** A response to `request`: Via, From, To, Call-ID and CSeq copied (RFC 3261 §8.2.6.2). */
export function responseTo(
  request: SipRequest,
  status: number,
  reason: string,
  extra: { toTag?: string; headers?: SipHeaders; body?: string } = {},
): SipResponse {
  const copied: SipHeaders = request.headers.filter(
    ([n]) => n === 'via' || n === 'from' || n === 'call-id' || n === 'cseq',
  );
  let to = header(request, 'to') ?? '';
  if (extra.toTag !== undefined && tagOf(to) === undefined && status > 100) to = `${to};tag=${extra.toTag}`;
  const out: SipHeaders = [...copied.filter(([n]) => n === 'via'), ['from', header(request, 'from') ?? '']];
  out.push(['to', to], ['call-id', header(request, 'call-id') ?? ''], ['cseq', header(request, 'cseq') ?? '']);
  return { kind: 'response', status, reason, headers: [...out, ...(extra.headers ?? [])], body: extra.body ?? '' };
}

/** A request with the mandatory headers present can be answered. */
export function answerable(request: SipRequest): boolean {
  return REQUIRED.every((name) => header(request, name) !== undefined) && topVia(request) !== undefined;
}

function parseStartLine(
  line: string,
): { kind: 'request'; method: string; uri: string } | { kind: 'response'; status: number; reason: string } | undefined {
  const response = /^SIP\/2\.0 ([1-6]\d\d) ?(.*)$/.exec(line);
  if (response !== null) return { kind: 'response', status: Number(response[1]), reason: response[2] ?? '' };
  const request = /^([A-Za-z]{1,32}) (\S{1,1024}) SIP\/2\.0$/.exec(line);
  if (request === null || !/^[a-z][a-z0-9+.-]*:/i.test(request[2]!)) return undefined;
  return { kind: 'request', method: request[1]!.toUpperCase(), uri: request[2]! };
}

/** `text` with control and non-ASCII bytes escaped, fit for a Warning header and logs. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]|"/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Header continuation lines (leading whitespace) join the line before them. */
function unfold(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && out.length > 1) out[out.length - 1] += ` ${line.trim()}`;
    else out.push(line);
  }
  return out;
}

const DISPLAY: Record<string, string> = {
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  'www-authenticate': 'WWW-Authenticate',
};

function display(name: string): string {
  return DISPLAY[name] ?? name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
