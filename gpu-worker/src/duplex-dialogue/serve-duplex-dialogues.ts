import type { MessagePort } from 'node:worker_threads';
import type { OutputStep, StepRequest } from '@venus/protocol';
import { fillEmbeddings } from '../perception/overlap-features.ts';
import { OnnxOverlapHead } from '../perception/overlap-head.ts';
import { SileroVad } from '../perception/silero-vad.ts';
import { SpeechEmbedding } from '../perception/speech-embedding.ts';
import { VadBatcher } from '../perception/vad-batcher.ts';
import type { OpenMessage } from '../threaded-port/thread-protocol.ts';
import { ThreadSessions } from '../threaded-port/thread-sessions.ts';
import type { DuplexDialogue } from './duplex-dialogue.ts';
import type { SpokenUtterance } from './speech-pacing.ts';

/**
 * Runs a session thread of duplex dialogues: one Silero VAD, one speech embedding and one overlap
 * head per thread, each batched across its sessions, and the thread's sessions served on `port`
 * (see ThreadSessions). Returns the step function, for a thread that calibrates its cost before
 * reporting ready.
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
  // The trained overlap head when one is installed (models/overlap-head/); the v1 rules otherwise.
  const head = await OnnxOverlapHead.load();
  // The head's rows carry the pretrained speech embedding, filled in here (asynchronously, batched).
  const embedding = head ? await SpeechEmbedding.create({ maxBatch, intraOpNumThreads: 1 }) : null;
  const step = async (dialogue: D, request: StepRequest) => {
    const plan = dialogue.beginStep(request);
    const probabilities = await batcher.score(dialogue.voice.stream, plan.frames);
    // completeStep: an utterance the step starts gets its first speech when its synthesis is nearly done (bounded).
    if (!head || !embedding || !dialogue.overlapHeadApplies)
      return dialogue.completeStep(dialogue.finishStep(plan, probabilities));
    const rows = dialogue.hearStep(plan, probabilities);
    // A failed embedding or head run leaves the step to the v1 rules.
    const scores =
      rows.length > 0
        ? await fillEmbeddings(rows, embedding)
            .then(() => head.score(rows.map((r) => r.features)))
            .catch(() => undefined)
        : [];
    return dialogue.completeStep(dialogue.finishStep(plan, probabilities, scores));
  };
  new ThreadSessions<D>(port, step).serve<O>(port, create, async () => {
    await release?.();
    await head?.close();
    await embedding?.close();
    await vad.close();
  });
  return step;
}
