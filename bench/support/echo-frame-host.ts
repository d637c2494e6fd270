import type { EdgeToWorkerFrame, TimelineEventOf, WorkerToEdgeFrame } from '@venus/protocol';
import type { RelayFrameHost } from '../../gpu-worker/src/relay/index.ts';
import { ECHO_PCM24K, FRAME_MS } from './echo-wire.ts';

interface EchoSession {
  seq: number;
  frames: number;
}

/**
 * The measuring worker of the relay benchmark: it stands where a SessionHost would, does no model
 * work, and answers each `audio` frame at once as a host sends assistant audio: an `assistant_audio`
 * frame with 20 ms of 24 kHz samples, then a `timeline` frame holding its `assistant.audio` event, whose `audioChunkSeq` is the number of that audio
 * frame in its session, counted from 0: the client's correlation id, since frames stay in order
 * end to end. `open` is accepted silently, `close` forgets the session, anything else is ignored.
 *
 * @example
 *   const relay = await serveRelay({ host: new EchoFrameHost(), port: 0 });
 */
export class EchoFrameHost implements RelayFrameHost {
  readonly #listeners = new Set<(frame: WorkerToEdgeFrame) => void>();
  readonly #sessions = new Map<string, EchoSession>();
  /** Sessions opened since the host was made. */
  opened = 0;

  get sessions(): number {
    return this.#sessions.size;
  }

  /** Frames arrive validated: serveRelay (or the in-process link) has checked them. */
  handleFrame(input: unknown): void {
    const frame = input as EdgeToWorkerFrame;
    switch (frame.kind) {
      case 'open':
        if (!this.#sessions.has(frame.session)) this.opened += 1;
        this.#sessions.set(frame.session, { seq: 0, frames: 0 });
        return;
      case 'audio': {
        const session = this.#sessions.get(frame.session);
        if (session === undefined) return;
        const n = session.frames++;
        session.seq += 1;
        const event: TimelineEventOf<'assistant.audio'> = {
          session: frame.session,
          seq: session.seq,
          chunk: n,
          atMs: n * FRAME_MS,
          stream: 'assistant',
          type: 'assistant.audio',
          data: {
            utteranceId: 'utt_echo',
            audioChunkSeq: n,
            audio: {
              segmentId: `a:${n}`,
              track: 'assistant',
              offsetMs: n * FRAME_MS,
              durationMs: FRAME_MS,
              sampleRateHz: 24_000,
            },
            startMs: n * FRAME_MS,
            durationMs: FRAME_MS,
          },
        };
        const samples = { utteranceId: 'utt_echo', audioChunkSeq: n, pcm24k: ECHO_PCM24K };
        this.#emit({ kind: 'assistant_audio', session: frame.session, ...samples });
        this.#emit({ kind: 'timeline', session: frame.session, event });
        return;
      }
      case 'close':
        this.#sessions.delete(frame.session);
        return;
      default:
        return;
    }
  }

  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(frame: WorkerToEdgeFrame): void {
    for (const listener of this.#listeners) listener(frame);
  }
}
