import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { powerToDb } from '../audio/signal.ts';
import { EVAL_RATE_HZ, readWav } from '../audio/wav-io.ts';
import { isSampleDir, readSample } from './sample-store.ts';
import { type EvalSet, type Sample, SampleMetadataSchema, type TranscriptEvent, VenusEvalSchema } from './scenario.ts';

export interface LoadOptions {
  /** The set of every sample found; otherwise inferred from folder names. */
  set?: EvalSet;
  asrDelayS?: number;
  /** Send the metadata's texts as transcript events (the reference model needs them). Default true. */
  transcripts?: boolean;
}

/** Folder names used by Full-Duplex-Bench v1.5 releases and by us. */
const SET_ALIASES: readonly (readonly [RegExp, EvalSet])[] = [
  [/user_?interrupt/i, 'user_interruption'],
  [/backchannel/i, 'user_backchannel'],
  [/talking_?to_?other|side_?conversation/i, 'talking_to_other'],
  [/background|ambient/i, 'background_speech'],
  [/pause/i, 'pause_handling'],
  [/turn_?taking/i, 'smooth_turn_taking'],
  [/delegation/i, 'delegation'],
];

function inferSet(dir: string): EvalSet | null {
  for (const part of dir.split(path.sep).reverse()) {
    for (const [pattern, set] of SET_ALIASES) if (pattern.test(part)) return set;
  }
  return null;
}

function findSampleDirs(root: string, depth = 4): string[] {
  if (isSampleDir(root)) return [root];
  if (depth === 0) return [];
  return readdirSync(root)
    .sort()
    .map((name) => path.join(root, name))
    .filter((p) => statSync(p).isDirectory())
    .flatMap((p) => findSampleDirs(p, depth - 1));
}

/** End (s) of the last stretch of sound before `before`, by 32 ms frame energy; null if none. */
function lastActivityEnd(input: Int16Array, before: number): number | null {
  const frame = 512;
  const limit = Math.min(input.length, Math.floor(before * EVAL_RATE_HZ));
  let end: number | null = null;
  for (let at = 0; at + frame <= limit; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += (input[i]! / 32768) ** 2;
    if (powerToDb(sum / frame) > -45) end = (at + frame) / EVAL_RATE_HZ;
  }
  return end;
}

/**
 * Reads every sample folder under `root`. Folders we generated carry `venus_eval` and are read as
 * they are. Full-Duplex-Bench v1.5 folders (input.wav + metadata.json with `context_text`,
 * `current_turn_text`, `timestamps`) get our fields derived: the set from the folder names, the
 * expected behaviour from the set, and a client-ASR stand-in for the transcript events: the context
 * text after the last sound before the overlap, the current turn's text after the overlap ends
 * (not for background speech, which a level-gated ASR would not pass on), both `asrDelayS` late.
 */
export function loadSamples(root: string, options: LoadOptions = {}): Sample[] {
  const asrDelayS = options.asrDelayS ?? 0.5;
  return findSampleDirs(path.resolve(root)).map((dir) => {
    const raw = JSON.parse(readFileSync(path.join(dir, 'metadata.json'), 'utf8')) as Record<string, unknown>;
    if (raw.venus_eval !== undefined) return readSample(dir);
    const meta = SampleMetadataSchema.parse(raw);
    const set = options.set ?? inferSet(dir);
    if (!set) throw new Error(`cannot tell the set of ${dir}: pass --set`);
    const input = readWav(path.join(dir, 'input.wav'));
    const [start, end] = meta.timestamps;
    const transcripts: TranscriptEvent[] = [];
    if (options.transcripts !== false) {
      const contextEnd = lastActivityEnd(input, start - 0.3);
      if (meta.context_text && contextEnd !== null)
        transcripts.push({ at: contextEnd + asrDelayS, text: meta.context_text });
      if (meta.current_turn_text && set !== 'background_speech')
        transcripts.push({ at: end + asrDelayS, text: meta.current_turn_text });
    }
    const expected =
      set === 'user_interruption'
        ? 'respond'
        : set === 'pause_handling'
          ? 'hold'
          : set === 'smooth_turn_taking'
            ? 'take_turn'
            : 'resume';
    const venus = VenusEvalSchema.parse({
      version: 1,
      set,
      id: path.basename(dir),
      source: 'full-duplex-bench',
      expected,
      duration: input.length / EVAL_RATE_HZ,
      transcripts,
      segments: [],
    });
    return { dir, meta: { ...meta, venus_eval: venus }, input };
  });
}
