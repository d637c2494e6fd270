import type { RecogniserFinal, RecogniserGrammar, RecogniserPartial } from '@venus/protocol';

/** Messages between the PocketSphinx recogniser and its worker thread. */
export type MainToRecogniser =
  | { t: 'open'; stream: number; grammar: RecogniserGrammar }
  | { t: 'audio'; stream: number; pcm: Int16Array }
  | { t: 'end'; stream: number }
  | { t: 'close'; stream: number }
  /** Asks for the thread's own CPU time (benches: unlike busy time it does not grow when the machine is loaded). */
  | { t: 'cpu'; id: number };

export type RecogniserToMain =
  | { t: 'ready' }
  | { t: 'opened'; stream: number; unknownWords: readonly string[] }
  | { t: 'partial'; stream: number; event: RecogniserPartial }
  | { t: 'final'; stream: number; event: RecogniserFinal }
  | { t: 'consumed'; stream: number; samples: number }
  | { t: 'closed'; stream: number }
  | { t: 'error'; stream: number; message: string }
  | { t: 'cpu'; id: number; ms: number };

/**
 * The rejection rule: the grammar path's acoustic log-likelihood per 10 ms frame (PocketSphinx's
 * log base 1.0001), squashed to 0..1 around a threshold. Speech the grammar does not cover is forced
 * onto grammar words that fit it poorly, so its score per frame is lower; the separation is weak
 * (see the README's figures), which is why `inGrammar` is a flag for the policy, not a verdict.
 * Threshold and slope measured on eSpeak voices (test/recogniser.test.ts prints the scores).
 */
export const REJECT_SCORE_PER_FRAME = -57;
const SLOPE = 4;

export function scoreToConfidence(scorePerFrame: number): number {
  return 1 / (1 + Math.exp(-(scorePerFrame - REJECT_SCORE_PER_FRAME) / SLOPE));
}

/**
 * `-remove_noise no`: PocketSphinx's spectral noise subtraction (on by default) estimates a noise
 * floor from the signal and subtracts it before the features. On synthetic voices and on 8 kHz
 * telephone audio it took speech with it: turned off, spoken demo requests came out right 79.4% ->
 * 86.9% on a development request set (seed 7) and 81.9% -> 87.5% on the reported one (seed 11),
 * words right 88.5% -> 91.9%, eSpeak through the telephone band 50% -> 65%
 * (eval/spoken-delegation/REPORT.md). The caller's VAD already decides what is speech.
 *
 * Beams wider than PocketSphinx's defaults (1e-48, 1e-48, 7e-29): with the defaults the grammar
 * search pruned away every path to a final state on some eSpeak clips (the final came out empty);
 * measured at ~1.5x the decoding time (0.08x -> 0.11x real time on this machine), no empty finals.
 *
 * `-maxhmmpf 2000`: at most ~2000 active HMMs per frame (the search tightens its beam on the frames
 * that would exceed it; PocketSphinx's default is 30000). With the wide beams above, the frames
 * that cost most were those where many grammar paths stayed alive at once. Measured: 18% less
 * decoding time (55.6 -> 45.8 CPU ms per audio second on 24 eSpeak clips, the same hypotheses on
 * all 24), spoken requests the same within the run-to-run spread (seed 7: 139/160 against 140/160;
 * seed 11, the reported set: 142/160, as before). 1500 cost 3 requests on seed 7, 1000 changed 2 of
 * the 24 clips' hypotheses. The shipped overlap head's features (`training/extract.ts`, which uses
 * these options) were extracted before this setting; it has not been retrained since.
 */
export const DECODER_OPTIONS = '-beam 1e-60 -pbeam 1e-60 -wbeam 1e-50 -maxhmmpf 2000 -remove_noise no';
