import type { MessagePort } from 'node:worker_threads';
import type { OutputStep, StepRequest } from '@venus/protocol';
import { SileroVad } from '../perception/silero-vad.ts';
import { VadBatcher } from '../perception/vad-batcher.ts';
import type { OpenMessage } from '../threaded-port/thread-protocol.ts';
import { ThreadSessions } from '../threaded-port/thread-sessions.ts';
import type { DuplexDialogue, SpokenUtterance } from './duplex-dialogue.ts';

/**
 * Runs a session thread of duplex dialogues: one Silero VAD per thread, batched across its
 * sessions, and the thread's sessions served on `port` (see ThreadSessions). Returns the step
 * function, for a thread that calibrates its cost before reporting ready.
 *
 * @example
 *   const step = await serveDuplexDialogues(parentPort, 64, (open) => new DialogueSession({ ...open, synthesize }));
 */
export async function serveDuplexDialogues<D extends DuplexDialogue<SpokenUtterance>, O extends OpenMessage>(
  port: MessagePort,
  maxBatch: number,
  create: (open: O) => D,
  /** Releases what the thread's sessions share beside the VAD (e.g. a recogniser thread), at shutdown. */
  release?: () => Promise<void> | undefined,
): Promise<(dialogue: D, request: StepRequest) => Promise<OutputStep>> {
  const vad = await SileroVad.create({ maxBatch, intraOpNumThreads: 1 });
  const batcher = new VadBatcher(vad);
  const step = async (dialogue: D, request: StepRequest) => {
    const plan = dialogue.beginStep(request);
    return dialogue.finishStep(plan, await batcher.score(dialogue.voice.stream, plan.frames));
  };
  new ThreadSessions<D>(port, step).serve<O>(port, create, async () => {
    await release?.();
    await vad.close();
  });
  return step;
}
