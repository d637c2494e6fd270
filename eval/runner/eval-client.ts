import { base64ToPcm, pcmToBase64 } from '@venus/protocol';
import WebSocket from 'ws';
import { encodeMulaw } from '../../edge/src/audio/g711.ts';
import { Speaker } from './speaker.ts';

export interface EvalTarget {
  /** ws:// or wss:// URL of an OpenAI-Realtime-compatible endpoint. */
  url: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /**
   * Use the `venus.*` extensions (chunk size, playback acknowledgements). `auto`: when the server's
   * `session.created` describes a `venus` session.
   */
  venus: 'auto' | 'on' | 'off';
  /** Sent as `session.update` right after `session.created` (merged with our venus settings). */
  session?: Record<string, unknown>;
  /** Foreground chunk period asked of a Venus runtime. */
  chunkMs?: number;
  /**
   * The microphone goes out as a phone line carries it: 8 kHz G.711 mu-law (`g711_ulaw`), so the
   * server hears telephone-band audio. Its audio out stays the server's default.
   */
  telephone?: boolean;
}

/** Sample rate of the microphone on the wire: 24 kHz pcm16, or 8 kHz mu-law for `telephone`. */
export function wireRateHz(target: Pick<EvalTarget, 'telephone'>): number {
  return target.telephone ? 8000 : 24_000;
}

export interface LoggedEvent {
  /** Milliseconds on the client clock: 0 is the first microphone frame. */
  t: number;
  dir: 'in' | 'out';
  event: Record<string, unknown>;
}

const AUDIO_DELTAS = new Set(['response.output_audio.delta', 'response.audio.delta']);
const FLUSHING = new Set(['output_audio_buffer.cleared', 'input_audio_buffer.speech_started']);
const OPEN_WORK = new Set(['QUEUED', 'RUNNING', 'COMPLETED', 'DELIVERING', 'CANCELLING']);

/**
 * One evaluation session over the public realtime WebSocket, behaving like a real client: it sends
 * microphone audio (24 kHz pcm16, or 8 kHz mu-law for a telephone target) and typed/ASR text, plays the assistant's audio on a virtual
 * speaker in real time, flushes it on a barge-in and truncates the cut item (as OpenAI clients do),
 * acknowledges playback when the server is a Venus runtime, and logs every event both ways on one
 * clock (audio payloads replaced by their size).
 *
 * @example
 *   const c = await EvalClient.connect({ url: 'ws://127.0.0.1:8080/v1/realtime', venus: 'auto' });
 *   c.start(); c.sendAudio(frame24k); c.sendText('hello'); … await c.close();
 */
export class EvalClient {
  readonly log: LoggedEvent[] = [];
  readonly speaker = new Speaker();
  venus = false;
  private t0 = performance.now();
  private readonly openResponses = new Set<string>();
  private readonly workStates = new Map<string, string>();
  private readonly acked = new Map<string, number>();
  private ackTimer: NodeJS.Timeout | null = null;
  private sessionCreated: (() => void) | null = null;
  private lastActivityMs = 0;
  /** Servers send GA and beta audio deltas alike; once a GA one is seen, only those are played. */
  private sawGaAudio = false;

  private constructor(
    private readonly ws: WebSocket,
    private readonly target: EvalTarget,
  ) {
    ws.on('message', (data) => this.onMessage(String(data)));
  }

  static async connect(target: EvalTarget): Promise<EvalClient> {
    const headers: Record<string, string> = { ...target.headers };
    if (target.apiKey) headers.Authorization = `Bearer ${target.apiKey}`;
    const ws = new WebSocket(target.url, { headers });
    const client = new EvalClient(ws, target);
    const created = new Promise<void>((resolve) => {
      client.sessionCreated = resolve;
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await withTimeout(created, 10_000, 'no session.created within 10 s');
    client.configure();
    return client;
  }

  /** Starts the client clock: t = 0 is now. */
  start(): void {
    this.t0 = performance.now();
    if (this.venus) this.ackTimer = setInterval(() => this.sendAcks(), 200);
  }

  now(): number {
    return performance.now() - this.t0;
  }

  /** One microphone frame at `wireRateHz(target)`. */
  sendAudio(pcm: Int16Array): void {
    const audio = this.target.telephone ? Buffer.from(encodeMulaw(pcm)).toString('base64') : pcmToBase64(pcm);
    this.send({ type: 'input_audio_buffer.append', audio }, false);
  }

  sendText(text: string): void {
    this.lastActivityMs = this.now();
    this.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
    });
  }

  /**
   * Nothing is happening: no response streams, nothing plays, no delegated work is still open, and
   * no event of note arrived for `quietMs`.
   */
  isIdle(quietMs: number): boolean {
    const now = this.now();
    if (this.openResponses.size > 0 || this.speaker.isPlaying(now)) return false;
    for (const state of this.workStates.values()) if (OPEN_WORK.has(state)) return false;
    return now - Math.max(this.lastActivityMs, this.speaker.endMs()) >= quietMs;
  }

  async close(): Promise<void> {
    if (this.ackTimer) clearInterval(this.ackTimer);
    this.ackTimer = null;
    if (this.ws.readyState !== WebSocket.OPEN) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.close(1000);
    });
  }

  private configure(): void {
    const session: Record<string, unknown> = { ...this.target.session };
    if (this.target.telephone) session.input_audio_format = 'g711_ulaw';
    if (this.venus)
      session.venus = { ...(this.target.chunkMs ? { chunk_ms: this.target.chunkMs } : {}), playback_acks: true };
    if (Object.keys(session).length > 0) this.send({ type: 'session.update', session });
  }

  private send(event: Record<string, unknown>, log = true): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (log) this.log.push({ t: this.now(), dir: 'out', event });
    this.ws.send(JSON.stringify(event));
  }

  private onMessage(text: string): void {
    const t = this.now();
    const event = JSON.parse(text) as Record<string, unknown>;
    const type = String(event.type);
    if (type === 'session.created') {
      const session = event.session as { venus?: unknown } | undefined;
      this.venus = this.target.venus === 'on' || (this.target.venus === 'auto' && session?.venus !== undefined);
      this.sessionCreated?.();
      this.sessionCreated = null;
    }
    if (AUDIO_DELTAS.has(type)) {
      const pcm = base64ToPcm(String(event.delta));
      // Beta and GA names carry the same audio: play one of them.
      if (type === 'response.output_audio.delta' || !this.sawGaAudio) {
        if (type === 'response.output_audio.delta') this.sawGaAudio = true;
        this.speaker.play(String(event.item_id), (event.response_id as string | undefined) ?? null, pcm, t);
      }
      this.log.push({ t, dir: 'in', event: { ...event, delta: `<${pcm.length} samples>` } });
      return;
    }
    this.log.push({ t, dir: 'in', event });
    if (type === 'response.created') this.openResponses.add(String((event.response as { id?: string })?.id));
    if (type === 'response.done') this.openResponses.delete(String((event.response as { id?: string })?.id));
    if (type === 'venus.work.state') this.workStates.set(String(event.work_id), String(event.state));
    if (type.startsWith('venus.work') || type === 'response.created') this.lastActivityMs = t;
    if (FLUSHING.has(type)) this.bargeIn(t);
  }

  /** Stop playback and tell the server how much of the cut item was heard. */
  private bargeIn(t: number): void {
    for (const cut of this.speaker.flush(t)) {
      this.send({
        type: 'conversation.item.truncate',
        item_id: cut.itemId,
        content_index: 0,
        audio_end_ms: Math.floor(cut.playedMs),
      });
    }
  }

  private sendAcks(): void {
    for (const [itemId, ms] of this.speaker.playedMs(this.now())) {
      const rounded = Math.floor(ms);
      if (rounded <= (this.acked.get(itemId) ?? -1)) continue;
      this.acked.set(itemId, rounded);
      this.send({ type: 'venus.playback.ack', item_id: itemId, played_ms: rounded }, false);
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
