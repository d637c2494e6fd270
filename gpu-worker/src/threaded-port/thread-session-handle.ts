import {
  type ContextEntry,
  type ContextRole,
  type InputAck,
  type ModelSession,
  type OutputStep,
  type PrefillAck,
  type PrefillRequest,
  type StepRequest,
  VenusError,
} from '@venus/protocol';
import type { SessionCall, SessionCallResult, SessionThreadMessage } from './thread-protocol.ts';

/** What a session needs from the port that opened it. */
export interface SessionOwner {
  readonly closed: boolean;
  /** How errors name the model, e.g. "the cascade model". */
  readonly modelName: string;
  /** The roles of restored history its sessions take into their context. */
  readonly historyRoles: ReadonlySet<ContextRole>;
  /** Its sessions take one-shot instructions for their next response. */
  readonly takesResponseInstructions: boolean;
  /** Its sessions hear between chunk steps this often (ms), if at all. */
  readonly perceptionTickMs?: number | undefined;
  released(session: ThreadSessionHandle): void;
}

/**
 * The thread a session lives on, as the handle uses it: one-way inputs and calls matched by id.
 * `WorkerLink` of any port whose thread speaks these messages fits (reference model, cascade, bundle).
 */
export interface SessionThread {
  sessions: number;
  readonly alive: boolean;
  nextId(): number;
  send(
    message: Extract<SessionThreadMessage, { t: 'audio' | 'text' | 'history' | 'instructions' }>,
    transfer?: readonly ArrayBuffer[],
  ): void;
  call<T>(message: Extract<SessionThreadMessage, { t: 'call' }>): Promise<T>;
}

/**
 * The main thread's handle on one model session living in a worker thread (the reference model's
 * inference thread, and likewise the cascade's and the ONNX bundle's). Inputs
 * are posted without a round trip (the worker applies them in order); step, prefill, park,
 * playback acknowledgements and close are calls. A handle whose session was reopened with a higher
 * incarnation is stale: every later call on it rejects with `stale_incarnation`.
 *
 * @example
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendText({ inputSeq: 1, itemId: 'i1', text: 'what time is it in Tokyo' });
 *   const out = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 */
export class ThreadSessionHandle implements ModelSession {
  private lastInputSeq = -1;
  private state: 'open' | 'closed' | 'stale' = 'open';
  /** Present only where the port's sessions take one-shot instructions (the host checks for it). */
  readonly instructNextResponse?: (input: { instructions: string }) => Promise<void>;
  readonly perceptionTickMs?: number;

  constructor(
    readonly sessionId: string,
    readonly incarnation: number,
    private readonly handle: number,
    private readonly link: SessionThread,
    private readonly owner: SessionOwner,
  ) {
    if (owner.perceptionTickMs !== undefined) this.perceptionTickMs = owner.perceptionTickMs;
    if (owner.takesResponseInstructions) {
      this.instructNextResponse = async ({ instructions }) => {
        this.assertOpen();
        this.link.send({ t: 'instructions', handle: this.handle, text: instructions });
      };
    }
  }

  private get modelName(): string {
    return this.owner.modelName;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Called by the port when a higher incarnation of this session opens. */
  supersede(): void {
    if (this.state !== 'open') return;
    this.state = 'stale';
    this.link.sessions -= 1;
    this.link
      .call({ t: 'call', id: this.link.nextId(), handle: this.handle, call: { op: 'close', reason: 'superseded' } })
      .catch(() => undefined);
  }

  async appendAudio(input: { inputSeq: number; pcm16k: Int16Array }): Promise<InputAck> {
    this.acceptInput(input.inputSeq);
    // A private copy is transferred, so the caller's buffer stays usable.
    const pcm = input.pcm16k.slice();
    this.link.send({ t: 'audio', handle: this.handle, inputSeq: input.inputSeq, pcm }, [pcm.buffer as ArrayBuffer]);
    return { inputSeq: input.inputSeq };
  }

  async appendText(input: { inputSeq: number; itemId: string; text: string }): Promise<InputAck> {
    this.acceptInput(input.inputSeq);
    this.link.send({ t: 'text', handle: this.handle, inputSeq: input.inputSeq, text: input.text });
    return { inputSeq: input.inputSeq };
  }

  async appendHistory(input: { inputSeq: number; itemId: string } & ContextEntry): Promise<InputAck> {
    this.assertOpen();
    if (!this.owner.historyRoles.has(input.role)) {
      throw new VenusError('unsupported_feature', `${this.modelName} cannot take a restored ${input.role} item`);
    }
    this.acceptInput(input.inputSeq);
    const { inputSeq, role, text } = input;
    this.link.send({ t: 'history', handle: this.handle, inputSeq, role, text });
    return { inputSeq };
  }

  async appendVideoFrame(_input: { inputSeq: number; mimeType: string; data: Uint8Array }): Promise<InputAck> {
    this.assertOpen();
    throw new VenusError('unsupported_feature', `${this.modelName} takes no video input`);
  }

  prefill(request: PrefillRequest): Promise<PrefillAck> {
    return this.call({ op: 'prefill', request });
  }

  async playbackAck(input: {
    utteranceId: string;
    playedMs: number;
    final: boolean;
    heardText?: string;
  }): Promise<void> {
    await this.call({ op: 'playbackAck', ...input });
  }

  async park(input: { planId: string; utteranceId: string; remainder: string }): Promise<void> {
    await this.call({ op: 'park', ...input });
  }

  step(request: StepRequest): Promise<OutputStep> {
    return this.call({ op: 'step', request });
  }

  async cancelResponse(): Promise<void> {
    await this.call({ op: 'cancelResponse' });
  }

  async close(reason: string): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'stale') this.assertOpen();
    this.state = 'closed';
    this.link.sessions -= 1;
    this.owner.released(this);
    // Closing after the port or its worker is gone has nothing left to free.
    if (this.owner.closed || !this.link.alive) return;
    await this.link.call({ t: 'call', id: this.link.nextId(), handle: this.handle, call: { op: 'close', reason } });
  }

  private call<K extends SessionCall['op']>(call: Extract<SessionCall, { op: K }>): Promise<SessionCallResult[K]> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.link.call<SessionCallResult[K]>({ t: 'call', id: this.link.nextId(), handle: this.handle, call });
  }

  private acceptInput(inputSeq: number): void {
    this.assertOpen();
    if (!Number.isInteger(inputSeq) || inputSeq <= this.lastInputSeq) {
      throw new VenusError('invalid_event', `inputSeq ${inputSeq} does not follow ${this.lastInputSeq}`);
    }
    this.lastInputSeq = inputSeq;
  }

  private assertOpen(): void {
    if (this.state === 'stale') {
      throw new VenusError(
        'stale_incarnation',
        `session ${this.sessionId} incarnation ${this.incarnation} was superseded`,
      );
    }
    if (this.owner.closed) throw new VenusError('model_unavailable', `${this.modelName} port is closed`);
    if (this.state === 'closed') throw new VenusError('session_closed', `session ${this.sessionId} is closed`);
  }
}
