/**
 * Why the telephony bench's failed calls failed, from both ends: SIPp's error trace (`-trace_err`:
 * what it received instead of what its scenario expected, or which timer ran out) joined by Call-ID
 * with the bridge's own `call ended` reason, and SIPp's cumulative Failed* counters (`-trace_stat`)
 * as a cross-check. A failed call count without its cause cannot be fixed.
 */

export interface CallFailures {
  /** "SIPp's view | the bridge's view" -> calls. */
  reasons: Record<string, number>;
  /** SIPp's non-zero cumulative Failed* counters at exit, e.g. `FailedUnexpectedMessage: 61`. */
  counters: Record<string, number>;
  /** One failed call's SIPp trace entry in full, for the report's reader. */
  example?: string;
}

/** One SIPp error-trace entry: the call it names (when it names one) and why it was aborted. */
interface SippError {
  callId: string | undefined;
  reason: string;
  text: string;
}

/**
 * SIPp stamps each entry `<date>\t<time>\t<epoch>: ` and does not always end the one before with a
 * newline; an entry may span lines (a whole SIP message).
 */
const STAMP = /\d{4}-\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+\.\d+: /g;

/** What SIPp says made it abort a call; `undefined` for entries that abort none (e.g. a stray retransmission). */
function abortOf(text: string): Omit<SippError, 'text'> | undefined {
  const unexpected =
    /unexpected message for Call-Id '([^']+)': while expecting '([^']*)'[^,]*, received '([^\r\n]*)/.exec(text);
  if (unexpected) return { callId: unexpected[1], reason: `got "${unexpected[3]}" while expecting ${unexpected[2]}` };
  const bye = /Aborting call on an unexpected BYE for call: (\S+?@[\d.]+)/.exec(text);
  if (bye) return { callId: bye[1], reason: 'unexpected BYE from the bridge' };
  const retrans = /Aborting call on UDP retransmission timeout for Call-ID '([^']+)'/.exec(text);
  if (retrans) return { callId: retrans[1], reason: 'no answer to its retransmissions (UDP timeout)' };
  const recv = /Call-Id: ([^,\s]+), receive timeout on message ([^:]+:\d+)/.exec(text);
  if (recv) return { callId: recv[1], reason: `receive timeout on ${recv[2]}` };
  const send = /Call-Id: ([^,\s]+), send timeout on message ([^:]+:\d+)/.exec(text);
  if (send) return { callId: send[1], reason: `send timeout on ${send[2]}` };
  const timedOut = /(\S+?@[\d.]+) timed out after '([\d.]+)' seconds/.exec(text);
  if (timedOut) return { callId: timedOut[1], reason: `call timed out (-timeout ${timedOut[2]} s)` };
  if (/abort/i.test(text)) return { callId: undefined, reason: text.trim().split('\n')[0]!.slice(0, 160) };
  return undefined;
}

function sippErrors(log: string): SippError[] {
  const starts = [...log.matchAll(STAMP)].map((m) => m.index);
  return starts.flatMap((start, i) => {
    const text = log.slice(start, starts[i + 1] ?? log.length).replace(STAMP, '');
    const abort = abortOf(text);
    return abort === undefined ? [] : [{ ...abort, text }];
  });
}

/** The bridge's `call ended` reason per Call-ID, and the Call-IDs it answered. */
function bridgeCalls(output: string): { ended: Map<string, string>; answered: Set<string> } {
  const ended = new Map<string, string>();
  const answered = new Set<string>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; callId?: string; reason?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.callId === undefined) continue;
    if (entry.msg === 'call answered') answered.add(entry.callId);
    if (entry.msg === 'call ended') ended.set(entry.callId, entry.reason ?? '?');
  }
  return { ended, answered };
}

/** SIPp's statistics file (`-trace_stat`, `;`-separated): the non-zero cumulative Failed* columns of its last row. */
function failedCounters(statsCsv: string): Record<string, number> {
  const rows = statsCsv.split('\n').filter((l) => l.trim() !== '');
  const head = rows[0]?.split(';') ?? [];
  const last = rows.at(-1)?.split(';') ?? [];
  const out: Record<string, number> = {};
  head.forEach((name, i) => {
    const value = Number(last[i]);
    if (name.startsWith('Failed') && name.endsWith('(C)') && value > 0) out[name.slice(0, -3)] = value;
  });
  return out;
}

export function callFailures(input: { sippErrors: string; sippStats: string; bridgeOutput: string }): CallFailures {
  const bridge = bridgeCalls(input.bridgeOutput);
  const reasons: Record<string, number> = {};
  const seen = new Set<string>();
  let example: string | undefined;
  for (const error of sippErrors(input.sippErrors)) {
    // One abort can be traced twice (the unexpected message, then the abort): count each call once.
    if (error.callId !== undefined) {
      if (seen.has(error.callId)) continue;
      seen.add(error.callId);
    }
    const side =
      error.callId === undefined
        ? 'no Call-ID'
        : bridge.ended.has(error.callId)
          ? `bridge ended it: ${bridge.ended.get(error.callId)}`
          : bridge.answered.has(error.callId)
            ? 'bridge answered it and never ended it'
            : 'bridge never answered it';
    const key = `${error.reason} | ${side}`;
    reasons[key] = (reasons[key] ?? 0) + 1;
    example ??= error.text.slice(0, 1200);
  }
  return { reasons, counters: failedCounters(input.sippStats), ...(example === undefined ? {} : { example }) };
}
