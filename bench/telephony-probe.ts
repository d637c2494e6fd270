import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BridgeUnderTest } from '../test/support/sip-bridge-process.ts';
import { SipUac } from '../test/support/sip-uac.ts';
import { until } from '../test/support/until.ts';

/**
 * A packet of the assistant's voice rather than digital silence: RMS over 20 (about -64 dBFS).
 * The previous threshold (300) called the quieter half of eSpeak's syllables silence, so the "last
 * voiced packet" was often one from before the decision and the figure came out negative.
 */
const VOICED_RMS = 20;
/** The assistant counts as speaking at the decision when its RTP was still arriving this close before it. */
const SPEAKING_GAP_MS = 60;

export interface ProbeResult {
  /** |inter-arrival - 20 ms| of the bridge's RTP within talkspurts, before the decision. */
  jitter: number[];
  /** Why there is no interruption figure, when there is none. */
  invalid?: string;
  /** Runtime decision -> last voiced packet of the cut talkspurt to arrive (ms). */
  silenceMs?: number;
  /**
   * Runtime decision -> the end of the assistant's voice at the caller's ear (ms): the last voiced
   * frame's end, played by a phone that plays each frame on arrival or right after the one before.
   * The bridge sends up to 40 ms ahead of real time, so this trails the last packet by 20-60 ms.
   */
  earMs?: number;
  /** Runtime decision -> the bridge's call core dropping the queued audio (its `caller took the floor` log line). */
  clearMs?: number;
}

interface Arrival {
  at: number;
  voiced: boolean;
  marker: boolean;
}

/**
 * One probe call: ask a question whose answer is long (about 5 s of speech), capture the bridge's
 * RTP, and barge in with speech as soon as the answer is audible, so the assistant is mid-sentence
 * when the runtime decides. The decision's time is taken where the runtime makes it (the session
 * host's timeline frame, in this process); RTP arrivals are stamped by a capture process of their
 * own (telephony-rtp-capture.ts) on the same wall clock. A probe whose assistant was not speaking at
 * the decision (its RTP had stopped, or the utterance had ended) has no figure and says why,
 * rather than a negative one.
 */
export async function probeCall(bridge: BridgeUnderTest, number: string, dir: string): Promise<ProbeResult> {
  const sip = createSocket('udp4');
  const rtp = createSocket('udp4');
  await new Promise<void>((r) => sip.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
  // The bridge's RTP goes to the capture process; the barge-in leaves from `rtp` here (the bridge
  // checks the source address, not the port).
  const capture = await RtpCapture.start();
  const callId = `${number}-${Date.now()}`;
  const call = new SipUac(sip, bridge.target, callId);
  let decision: { at: number; utteranceId: string | null } | undefined;
  const finished = new Map<string, number>();
  let session: string | undefined;
  const off = bridge.runtime.host.onFrame((frame) => {
    if (frame.kind !== 'timeline' || frame.session !== session) return;
    const e = frame.event;
    if (e.type === 'assistant.interruption' && e.data.action !== 'continue' && decision === undefined)
      decision = { at: performance.now(), utteranceId: e.data.utteranceId };
    if (e.type === 'assistant.utterance' && e.data.phase === 'finished' && !finished.has(e.data.utteranceId))
      finished.set(e.data.utteranceId, performance.now());
  });
  let timer: ReturnType<typeof setInterval> | undefined;
  try {
    // The bridge may refuse the call (503: the worker did not open its session): no figure then.
    let answered = false;
    // Settled either way: a refused call's INVITE waits on for a 200 that will not come.
    void call.invite(number, capture.port).then(
      () => {
        answered = true;
      },
      () => {},
    );
    await until(
      'the probe call is answered or refused',
      () => answered || refusal(bridge, callId) !== undefined,
      120_000,
    );
    if (!answered) return { jitter: [], invalid: `probe call refused (503): ${refusal(bridge, callId)}` };
    session = bridge.sessionsFor(number).at(-1);
    await call.message("What's the weather in Paris?");
    // Barge in once the answer is audible: it has seconds left to run.
    await until('the answer plays', () => capture.arrivals.filter((a) => a.voiced).length >= 5, 120_000);
    const stop = readFileSync(path.join(dir, 'stop.ulaw'));
    let at = 0;
    let seq = 1;
    timer = setInterval(() => {
      const frame = stop.subarray(at % stop.length, (at % stop.length) + 160);
      at += 160;
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header.writeUInt16BE(seq++, 2);
      header.writeUInt32BE(seq * 160, 4);
      header.writeUInt32BE(0xbe0c4, 8);
      rtp.send(
        Buffer.concat([header, frame.length === 160 ? frame : Buffer.alloc(160, 0xff)]),
        call.mediaPort,
        '127.0.0.1',
      );
    }, 20);
    await until('the runtime gives the caller the floor', () => decision !== undefined, 60_000).catch(() => {});
    clearInterval(timer);
    // Packets already on the wire at the decision may still land: give them a second (figures only).
    await new Promise((r) => setTimeout(r, 1000));
    await call.bye();
    const arrivals = await capture.stop();
    return measure(arrivals, decision, finished, session === undefined ? undefined : clearedAt(bridge, session));
  } finally {
    clearInterval(timer);
    off();
    capture.kill();
    sip.close();
    rtp.close();
  }
}

/** The capture process: its port, and the packets it has reported so far (times on this process's clock). */
class RtpCapture {
  readonly arrivals: Arrival[] = [];
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  port = 0;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let rest = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const [a, b, c] = line.split(' ');
        if (a === 'port') this.port = Number(b);
        else
          this.arrivals.push({
            at: Number(a) - performance.timeOrigin,
            voiced: Number(b) > VOICED_RMS,
            marker: c === '1',
          });
      }
    });
  }

  static async start(): Promise<RtpCapture> {
    const script = path.join(import.meta.dirname, 'telephony-rtp-capture.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const capture = new RtpCapture(child);
    await until('the RTP capture process listens', () => capture.port > 0 || child.exitCode !== null, 60_000);
    if (capture.port === 0) throw new Error('the RTP capture process exited');
    return capture;
  }

  /** Ends the capture; every packet it saw. */
  async stop(): Promise<Arrival[]> {
    this.#child.stdin?.end();
    await this.#exited;
    return this.arrivals;
  }

  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill();
  }
}

/** When frame `last` ends at a phone that plays each frame on arrival or right after the one before (its talkspurt from the marker). */
function playedUntil(arrivals: Arrival[], last: number): number {
  let start = last;
  while (start > 0 && !arrivals[start]!.marker) start -= 1;
  let end = 0;
  for (const a of arrivals.slice(start, last + 1)) end = Math.max(a.at, end) + 20;
  return end;
}

/** Why the bridge refused call `callId` (its `call refused` log line), if it did. */
function refusal(bridge: BridgeUnderTest, callId: string): string | undefined {
  const line = bridge.output.split('\n').find((l) => l.includes('"call refused"') && l.includes(`"${callId}"`));
  if (line === undefined) return undefined;
  return (JSON.parse(line) as { err?: { message?: string } }).err?.message ?? 'no reason logged';
}

/** When the bridge dropped the session's queued audio, on this process's `performance.now()` clock. */
function clearedAt(bridge: BridgeUnderTest, session: string): number | undefined {
  for (const line of bridge.output.split('\n')) {
    if (!line.includes('caller took the floor') || !line.includes(session)) continue;
    const { at } = JSON.parse(line) as { at?: number };
    if (at !== undefined) return at - performance.timeOrigin;
  }
  return undefined;
}

function measure(
  arrivals: Arrival[],
  decision: { at: number; utteranceId: string | null } | undefined,
  finished: Map<string, number>,
  cleared: number | undefined,
): ProbeResult {
  const before = decision === undefined ? arrivals : arrivals.filter((a) => a.at <= decision.at);
  // Within a talkspurt only: the marker bit starts the next utterance's.
  const jitter = before.slice(1).flatMap((a, i) => (a.marker ? [] : [Math.abs(a.at - before[i]!.at - 20)]));
  if (decision === undefined) return { jitter, invalid: 'no decision' };
  const ended = decision.utteranceId === null ? undefined : finished.get(decision.utteranceId);
  if (decision.utteranceId === null || (ended !== undefined && ended < decision.at))
    return { jitter, invalid: 'no utterance playing at the decision' };
  const lastBefore = before.at(-1);
  if (lastBefore === undefined || decision.at - lastBefore.at > SPEAKING_GAP_MS)
    return { jitter, invalid: 'RTP had stopped before the decision' };
  // The cut talkspurt: packets after the decision up to the next one's marker.
  const after: Arrival[] = [];
  for (const a of arrivals.slice(before.length)) {
    if (a.marker) break;
    after.push(a);
  }
  const spurt = [...before.slice(-1), ...after];
  const lastVoiced = spurt.filter((a) => a.voiced).at(-1) ?? lastBefore;
  return {
    jitter,
    silenceMs: lastVoiced.at - decision.at,
    earMs: playedUntil(arrivals, arrivals.indexOf(lastVoiced)) - decision.at,
    ...(cleared === undefined ? {} : { clearMs: cleared - decision.at }),
  };
}
