import type { MessagePort } from 'node:worker_threads';
import type { ContextEntry, ErrorCode, OutputStep, PrefillAck, PrefillRequest, StepRequest } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import type { OpenMessage, SessionCall, SessionThreadMessage } from './thread-protocol.ts';

/** A session as a worker thread hosts it: the dialogue state of the reference model, the cascade or a bundle. */
export interface ThreadDialogue {
  appendAudio(inputSeq: number, pcm: Int16Array): void;
  appendText(inputSeq: number, text: string): void;
  /** Only the roles its port lists in `historyRoles` come here (the handle refuses the others). */
  appendHistory(inputSeq: number, entry: ContextEntry): void;
  /** Instructions for the next response only; present where the port's setup says it takes them. */
  instructNextResponse?(text: string): void;
  prefill(request: PrefillRequest): PrefillAck;
  /** `heardText`, on a final acknowledgement, is what the context keeps of the utterance (the host's one rule). */
  playbackAck(utteranceId: string, playedMs: number, final: boolean, heardText?: string): void;
  /** Absent where the model keeps no plans (parking is then acknowledged and has no effect). */
  park?(planId: string, remainder: string): void;
  cancelResponse(): void;
  close?(): void;
}

/**
 * The sessions one worker thread hosts, for every model port whose sessions live in threads. Calls
 * on one session run strictly in order; replies go back to the main thread matched by id, a step's
 * audio transferred rather than copied; errors travel as their code.
 *
 * @example
 *   const sessions = new ThreadSessions(port, (d, request) => engine.step(d, request));
 *   sessions.open(handle, dialogue);
 *   sessions.call(message.id, message.handle, message.call);
 */
export class ThreadSessions<D extends ThreadDialogue> {
  private readonly hosted = new Map<number, { dialogue: D; chain: Promise<unknown> }>();

  constructor(
    private readonly port: MessagePort | { postMessage(message: unknown, transfer?: ArrayBuffer[]): void },
    private readonly step: (dialogue: D, request: StepRequest) => OutputStep | Promise<OutputStep>,
  ) {}

  open(handle: number, dialogue: D): void {
    this.hosted.set(handle, { dialogue, chain: Promise.resolve() });
  }

  get(handle: number): D | undefined {
    return this.hosted.get(handle)?.dialogue;
  }

  dialogues(): D[] {
    return [...this.hosted.values()].map((h) => h.dialogue);
  }

  /** Runs a session call after the session's earlier calls, and replies. */
  call(id: number, handle: number, call: SessionCall): void {
    const hosted = this.hosted.get(handle);
    if (!hosted) {
      this.reply(id, Promise.reject(new VenusError('session_closed', `no session with handle ${handle}`)));
      return;
    }
    const result = hosted.chain.then(() => this.run(hosted.dialogue, handle, call));
    hosted.chain = result.catch(() => undefined);
    this.reply(id, result);
  }

  /**
   * Answers the main thread on `port`: `open` hosts the dialogue `create` makes, inputs and calls go
   * to their session, `shutdown` closes every session then waits for `release` (the thread's native
   * resources), `crash` exits at once with code 1 as a native crash would (a test hook).
   */
  serve<O extends OpenMessage>(
    port: Pick<MessagePort, 'on'>,
    create: (open: O) => D,
    release: () => Promise<unknown>,
  ): void {
    port.on('message', (message: SessionThreadMessage<O>) => {
      switch (message.t) {
        case 'crash':
          process.exit(1);
          return;
        case 'shutdown':
          this.closeAll();
          this.reply(
            message.id,
            release().then(() => null),
          );
          return;
        case 'open':
          this.open(message.handle, create(message as O));
          this.reply(message.id, Promise.resolve(null));
          return;
        case 'audio':
          this.get(message.handle)?.appendAudio(message.inputSeq, message.pcm);
          return;
        case 'text':
          this.get(message.handle)?.appendText(message.inputSeq, message.text);
          return;
        case 'instructions':
          this.get(message.handle)?.instructNextResponse?.(message.text);
          return;
        case 'history':
          this.get(message.handle)?.appendHistory(message.inputSeq, { role: message.role, text: message.text });
          return;
        case 'call':
          this.call(message.id, message.handle, message.call);
          return;
      }
    });
  }

  /** Closes every session (before the thread releases its native resources). */
  closeAll(): void {
    for (const h of this.hosted.values()) h.dialogue.close?.();
    this.hosted.clear();
  }

  reply(id: number, work: Promise<unknown>): void {
    work.then(
      (value) => {
        const audio = (value as { audio?: unknown } | null)?.audio;
        this.port.postMessage(
          { t: 'reply', id, ok: true, value },
          audio instanceof Int16Array ? [audio.buffer as ArrayBuffer] : [],
        );
      },
      (err: unknown) => {
        const code: ErrorCode = VenusError.isInstance(err) ? err.code : 'model_step_failed';
        this.port.postMessage({
          t: 'reply',
          id,
          ok: false,
          code,
          message: err instanceof Error ? err.message : String(err),
        });
      },
    );
  }

  private async run(dialogue: D, handle: number, call: SessionCall): Promise<unknown> {
    switch (call.op) {
      case 'step':
        return this.step(dialogue, call.request);
      case 'prefill':
        return dialogue.prefill(call.request);
      case 'playbackAck':
        dialogue.playbackAck(call.utteranceId, call.playedMs, call.final, call.heardText);
        return null;
      case 'park':
        dialogue.park?.(call.planId, call.remainder);
        return null;
      case 'cancelResponse':
        dialogue.cancelResponse();
        return null;
      case 'close':
        dialogue.close?.();
        this.hosted.delete(handle);
        return null;
    }
  }
}
