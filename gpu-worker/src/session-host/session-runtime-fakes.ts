import type {
  DelegationExecutor,
  DelegationRequest,
  DeliveryPolicy,
  MediaRef,
  MediaStore,
  MediaTrack,
  ModelSession,
  OutputStep,
  TimelineEvent,
  TimelineStore,
  WorkEventListener,
} from '@venus/protocol';
import { SessionConfigSchema } from '@venus/protocol';
import { SessionRuntime } from './session-runtime.ts';

/** Fakes for SessionRuntime unit tests: a scripted model session, an executor, stores. */

/** Fake model session: returns scripted steps; records what the host fed it. */
export class FakeModelSession implements ModelSession {
  readonly sessionId = 's1';
  readonly incarnation = 0;
  readonly script: Partial<OutputStep>[] = [];
  readonly prefills: { text: string; attemptId: string; mode: string }[] = [];
  readonly acks: { utteranceId: string; playedMs: number; final: boolean }[] = [];
  readonly parked: string[] = [];
  cancels = 0;
  private stepSeq = 0;
  async cancelResponse() {
    this.cancels += 1;
  }
  async appendAudio(i: { inputSeq: number }) {
    return { inputSeq: i.inputSeq };
  }
  async appendText(i: { inputSeq: number }) {
    return { inputSeq: i.inputSeq };
  }
  async appendVideoFrame(i: { inputSeq: number }) {
    return { inputSeq: i.inputSeq };
  }
  async prefill(r: { text: string; attemptId: string; mode: 'speak' | 'silent' }) {
    this.prefills.push(r);
    return { attemptId: r.attemptId, deduplicated: false };
  }
  async playbackAck(i: { utteranceId: string; playedMs: number; final: boolean }) {
    this.acks.push(i);
  }
  async park(i: { planId: string; remainder: string }) {
    this.parked.push(i.remainder);
  }
  async step(r: { chunk: number; inputSeqCutoff: number }): Promise<OutputStep> {
    const next = this.script.shift() ?? {};
    return {
      stepSeq: ++this.stepSeq,
      chunk: r.chunk,
      inputSeqCutoff: r.inputSeqCutoff,
      decision: next.utteranceId ? 'speak' : 'listen',
      text: '',
      utteranceId: null,
      audio: null,
      audioChunkSeq: 0,
      turnFinished: false,
      ...next,
    };
  }
  async close() {}
}

/** Fake executor: records submissions and cancels; the test emits work events by hand. */
export class FakeExecutor implements DelegationExecutor {
  readonly submitted: DelegationRequest[] = [];
  readonly cancelled: string[] = [];
  private listener: WorkEventListener = () => {};
  async submit(r: DelegationRequest) {
    this.submitted.push(r);
  }
  async cancel(workId: string) {
    this.cancelled.push(workId);
    this.listener({ kind: 'state', session: 's1', incarnation: 0, workId, state: 'CANCELLED' });
  }
  subscribe(l: WorkEventListener) {
    this.listener = l;
    return () => {};
  }
  emit: WorkEventListener = (e) => this.listener(e);
  /** Lands a successful result of `workId` with `policy`. */
  result(workId: string, text: string, policy: DeliveryPolicy) {
    const base = { session: 's1', incarnation: 0, workId };
    const expiresAtMs = Number.MAX_SAFE_INTEGER;
    this.emit({ ...base, kind: 'result', result: { ...base, ok: true, text, policy, completedAtMs: 0, expiresAtMs } });
  }
  async close() {}
}

/** Fake store: keeps appended events in an array. */
export class FakeStore implements Pick<TimelineStore, 'append'> {
  readonly events: TimelineEvent[] = [];
  async append(events: readonly TimelineEvent[]) {
    this.events.push(...events);
  }
}

/** Fake media store: keeps nothing, hands out references in order. */
export class FakeMediaStore implements MediaStore {
  private n = 0;
  put(_session: string, track: MediaTrack, pcm: Int16Array, sampleRateHz: 16_000 | 24_000): MediaRef {
    return {
      segmentId: `${track}:${++this.n}`,
      track,
      offsetMs: 0,
      durationMs: (pcm.length * 1000) / sampleRateHz,
      sampleRateHz,
    };
  }
  async read() {
    return null;
  }
  async recent() {
    return [];
  }
  endSession() {}
  async close() {}
}

export const tick = () => new Promise((r) => setTimeout(r, 0));

/** A runtime on the fakes, stepped by hand (`boundary`), with the timeline events it emitted. */
export function setup<M extends FakeModelSession>(model: M = new FakeModelSession() as M) {
  const executor = new FakeExecutor();
  const store = new FakeStore();
  let clock = 1_000_000;
  const emitted: TimelineEvent[] = [];
  const rt = new SessionRuntime({
    sessionId: 's1',
    tenant: 't',
    incarnation: 0,
    config: SessionConfigSchema.parse({ chunkMs: 160 }),
    model,
    executor,
    store: store as unknown as TimelineStore,
    media: new FakeMediaStore(),
    emit: (f) => {
      if (f.kind === 'timeline') emitted.push(f.event);
    },
    startSeq: 0,
    now: () => clock,
    autoStep: false,
  });
  executor.subscribe((e) => rt.onWorkEvent(e));
  rt.start();
  const boundary = async (advanceMs = 160) => {
    clock += advanceMs;
    rt.boundary();
    await tick();
  };
  const ofType = <T extends TimelineEvent['type']>(t: T) =>
    emitted.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === t);
  return { model, executor, store, rt, emitted, boundary, ofType };
}
