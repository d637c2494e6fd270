import { base64ToPcm, pcmToBase64, type ServerEvent, type TimelineEvent } from '@venus/protocol';
import WebSocket from 'ws';

export interface RealtimeClientOptions {
  url: string;
  apiKey?: string;
  /** Send `venus.playback.ack` as audio plays (a Venus-aware client); otherwise the edge estimates. */
  acknowledgePlayback?: boolean;
  /**
   * Ask for the per-chunk audio records in `venus.timeline` (`session.venus.timeline_audio`), so
   * `timeline` holds every event, as the demo's timeline drawing needs. Default true; connect
   * returns once the edge has applied it.
   */
  timelineAudio?: boolean;
}

interface Placed {
  itemId: string;
  atMs: number;
  pcm: Int16Array;
}

/**
 * A small realtime client over the public WebSocket, used by the demo and the end-to-end tests.
 * It plays assistant audio in real time (a virtual speaker: nothing is output, but the playout clock
 * is real), acknowledges what was heard, flushes its buffer on a barge-in as OpenAI clients do, and
 * records both sides on one clock so a conversation can be written out as a stereo WAV.
 */
export class RealtimeClient {
  readonly events: ServerEvent[] = [];
  readonly timeline: TimelineEvent[] = [];
  readonly userAudio: { atMs: number; pcm24k: Int16Array }[] = [];
  readonly played: Placed[] = [];
  private readonly ws: WebSocket;
  private readonly t0 = performance.now();
  private readonly waiters = new Set<() => void>();
  private cursorMs = 0;
  private readonly ackTimer: NodeJS.Timeout | null = null;
  sessionId = '';

  private constructor(ws: WebSocket, opts: RealtimeClientOptions) {
    this.ws = ws;
    ws.on('message', (data) => this.onMessage(String(data)));
    if (opts.acknowledgePlayback) this.ackTimer = setInterval(() => this.sendAcks(), 200);
  }

  static async connect(opts: RealtimeClientOptions): Promise<RealtimeClient> {
    const ws = new WebSocket(opts.url, opts.apiKey ? { headers: { Authorization: `Bearer ${opts.apiKey}` } } : {});
    // Listen before the socket opens: the server greets with session.created at once.
    const client = new RealtimeClient(ws, opts);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await client.waitFor((e) => e.type === 'session.created');
    if (opts.timelineAudio ?? true) {
      client.send({ type: 'session.update', session: { venus: { timeline_audio: true } } });
      await client.waitFor((e) => e.type === 'session.updated' || e.type === 'error');
    }
    return client;
  }

  nowMs(): number {
    return performance.now() - this.t0;
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(event));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  say(text: string): void {
    this.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
    });
  }

  private mic: { queue: Int16Array[]; timer: NodeJS.Timeout; drained: (() => void)[] } | null = null;

  /**
   * Opens a live microphone: from now on a 100 ms frame goes out every 100 ms, silence unless
   * `speak` queued speech, as a real client's microphone does. Voice activity needs the silence to
   * tell where speech ends.
   */
  startMicrophone(frameMs = 100): void {
    if (this.mic) return;
    const frame = (24_000 * frameMs) / 1000;
    const start = performance.now();
    let n = 0;
    const mic = { queue: [] as Int16Array[], drained: [] as (() => void)[], timer: setTimeout(() => {}, 0) };
    const tick = () => {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      let part = new Int16Array(frame);
      const head = mic.queue[0];
      if (head) {
        part.set(head.subarray(0, frame));
        if (head.length <= frame) mic.queue.shift();
        else mic.queue[0] = head.subarray(frame);
        if (mic.queue.length === 0) for (const d of mic.drained.splice(0)) d();
      } else {
        part = new Int16Array(frame);
      }
      this.userAudio.push({ atMs: this.nowMs(), pcm24k: part });
      this.send({ type: 'input_audio_buffer.append', audio: pcmToBase64(part) });
      n += 1;
      mic.timer = setTimeout(tick, Math.max(0, start + n * frameMs - performance.now()));
    };
    mic.timer = setTimeout(tick, 0);
    this.mic = mic;
  }

  /** Speaks 24 kHz PCM into the microphone; resolves once it has all been sent (in real time). */
  async speak(pcm24k: Int16Array): Promise<void> {
    if (!this.mic) this.startMicrophone();
    const mic = this.mic!;
    await new Promise<void>((resolve) => {
      mic.queue.push(pcm24k);
      mic.drained.push(resolve);
    });
  }

  /** Lets `ms` of (microphone) time pass. */
  async silence(ms: number): Promise<void> {
    if (!this.mic) this.startMicrophone();
    await new Promise((r) => setTimeout(r, ms));
  }

  waitFor(predicate: (e: ServerEvent) => boolean, timeoutMs = 30_000, fromIndex = 0): Promise<ServerEvent> {
    const found = this.events.slice(fromIndex).find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.events.slice(fromIndex).find(predicate);
        if (hit) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `timed out waiting for an event (have ${this.events
              .map((e) => e.type)
              .slice(-15)
              .join(', ')})`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Waits for a timeline event relayed as `venus.timeline`. */
  async waitForTimeline(predicate: (e: TimelineEvent) => boolean, timeoutMs = 30_000): Promise<TimelineEvent> {
    const ev = await this.waitFor((e) => e.type === 'venus.timeline' && predicate(e.event as TimelineEvent), timeoutMs);
    return ev.event as TimelineEvent;
  }

  private onMessage(text: string): void {
    const event = JSON.parse(text) as ServerEvent;
    this.events.push(event);
    if (event.type === 'session.created') this.sessionId = String((event.session as { id?: string })?.id ?? '');
    if (event.type === 'venus.timeline') this.timeline.push(event.event as TimelineEvent);
    if (event.type === 'response.output_audio.delta')
      this.play(String(event.item_id), base64ToPcm(String(event.delta)));
    if (event.type === 'output_audio_buffer.cleared' || event.type === 'input_audio_buffer.speech_started')
      this.flush();
    for (const w of [...this.waiters]) w();
  }

  /** Queues audio on the virtual speaker: it plays after what is already queued. */
  private play(itemId: string, pcm: Int16Array): void {
    const at = Math.max(this.nowMs(), this.cursorMs);
    this.played.push({ itemId, atMs: at, pcm });
    this.cursorMs = at + (pcm.length / 24_000) * 1000;
  }

  /** Barge-in: drop what has not played yet, as OpenAI clients do on speech_started. */
  private flush(): void {
    const now = this.nowMs();
    for (const p of this.played) {
      if (p.atMs >= now) p.pcm = new Int16Array(0);
      else {
        const playedSamples = Math.floor(((now - p.atMs) / 1000) * 24_000);
        if (playedSamples < p.pcm.length) p.pcm = p.pcm.subarray(0, playedSamples);
      }
    }
    this.cursorMs = now;
  }

  /** Heard milliseconds per item, as of now. */
  heardMs(): Map<string, number> {
    const now = this.nowMs();
    const heard = new Map<string, number>();
    for (const p of this.played) {
      const ms = Math.max(0, Math.min(now - p.atMs, (p.pcm.length / 24_000) * 1000));
      heard.set(p.itemId, (heard.get(p.itemId) ?? 0) + ms);
    }
    return heard;
  }

  private lastAcked = new Map<string, number>();
  private sendAcks(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    for (const [itemId, ms] of this.heardMs()) {
      const rounded = Math.floor(ms);
      if (rounded <= (this.lastAcked.get(itemId) ?? -1)) continue;
      this.lastAcked.set(itemId, rounded);
      this.send({ type: 'venus.playback.ack', item_id: itemId, played_ms: rounded });
    }
  }

  async close(): Promise<void> {
    if (this.ackTimer) clearInterval(this.ackTimer);
    if (this.mic) clearTimeout(this.mic.timer);
    this.mic = null;
    if (this.ws.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        this.ws.once('close', () => resolve());
        this.ws.close(1000);
      });
    }
  }
}
