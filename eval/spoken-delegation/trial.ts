import { setTimeout as sleep } from 'node:timers/promises';
import { DelegateParser, type ReferenceModelPort } from '@venus/gpu-worker';
import {
  createBuiltinFunctions,
  DelegationRunner,
  FunctionRegistry,
  type Plan,
  type Planner,
  RouterPlanner,
} from '@venus/harness-functions';
import type { ModelSession } from '@venus/protocol';

/** What the reference model did with one spoken request, and what the harness made of it. */
export interface TrialOutcome {
  /** The recogniser's final transcripts of the request ('' when one came back empty). */
  transcripts: { text: string; inGrammar: boolean; confidence: number }[];
  /** The query of the first `<delegate>` span the model emitted, or null. */
  query: string | null;
  /** What the model said around it (the visible text), for the report's examples. */
  said: string;
  /** The plan the harness's planner made for the query (null: none fitted, or no query). */
  plan: Plan | null;
  /** Whether the planned function ran and answered (false: failed, or never ran). */
  answered: boolean;
  /** What the harness would say: the function's answer or its apology. */
  answer: string;
  /** Steps the session took for this request. */
  steps: number;
}

const CHUNK_MS = 160;
const CHUNK_SAMPLES = CHUNK_MS * 16;
const LEAD_SILENCE_MS = 320;
/** Silent steps after the words came back within which the reply must have delegated (24 s of session time). */
const STEPS_AFTER_WORDS = 150;
/** Wall time to wait for the recogniser and speech synthesis on a loaded machine. */
const MAX_WAIT_MS = 30_000;

/** Records the plan the real planner made, so the report can show the arguments it extracted. */
class RecordingPlanner implements Planner {
  last: Plan | null = null;
  readonly #inner = new RouterPlanner();

  async plan(query: string, functions: Parameters<Planner['plan']>[1]): Promise<Plan | null> {
    this.last = await this.#inner.plan(query, functions);
    return this.last;
  }
}

/**
 * The harness as `npm start` runs it for the reference model: the built-in functions (no latency)
 * behind a DelegationRunner with the default planner (the deterministic RouterPlanner; a model
 * planner only when VENUS_PLANNER_* is set). One delegation at a time.
 */
export class Harness {
  readonly #planner = new RecordingPlanner();
  readonly #runner = new DelegationRunner({
    registry: new FunctionRegistry(createBuiltinFunctions({ latencyMs: 0 })),
    planner: this.#planner,
  });
  #work = 0;

  async route(query: string): Promise<{ plan: Plan | null; answered: boolean; answer: string }> {
    this.#planner.last = null;
    const outcome = await this.#runner.run(
      {
        workId: `w${++this.#work}`,
        session: 'spoken-delegation',
        incarnation: 0,
        tenant: 'default',
        query,
        evidenceCutoffSeq: 0,
        chunk: 0,
        createdAtMs: 0,
      },
      { signal: AbortSignal.timeout(10_000) },
    );
    return { plan: this.#planner.last, answered: outcome.ok, answer: outcome.result.text };
  }
}

/**
 * One spoken request through the reference model as the session host drives it, without waiting
 * in real time: a fresh session (the request is the first thing a caller says), 320 ms of
 * silence, the speech in 160 ms chunks, then silent chunks until the model's reply has delegated
 * or finished (or nothing more can come). The `<delegate>` span is read with the host's own parser;
 * its query goes to the harness.
 */
export async function runTrial(
  port: ReferenceModelPort,
  harness: Harness,
  sessionId: string,
  speech16k: Int16Array,
): Promise<TrialOutcome> {
  const session = await port.openSession({ sessionId, incarnation: 0 });
  try {
    const heard = await hear(session, speech16k);
    const routed =
      heard.query === null ? { plan: null, answered: false, answer: '' } : await harness.route(heard.query);
    return { ...heard, ...routed };
  } finally {
    await session.close('trial done');
  }
}

async function hear(
  session: ModelSession,
  speech16k: Int16Array,
): Promise<Pick<TrialOutcome, 'transcripts' | 'query' | 'said' | 'steps'>> {
  const parser = new DelegateParser();
  const transcripts: TrialOutcome['transcripts'] = [];
  let query: string | null = null;
  let said = '';
  let seq = 0;
  let finishedAfterWords = false;
  const step = async (pcm: Int16Array): Promise<void> => {
    const inputSeq = ++seq;
    await session.appendAudio({ inputSeq, pcm16k: pcm });
    const out = await session.step({
      chunk: inputSeq - 1,
      inputSeqCutoff: inputSeq,
      atMs: inputSeq * CHUNK_MS,
      assistantAudible: false,
    });
    for (const t of out.userTranscripts ?? [])
      transcripts.push({ text: t.text, inGrammar: t.inGrammar, confidence: t.confidence });
    const events = [...parser.push(out.text), ...(out.turnFinished ? parser.endTurn() : [])];
    for (const e of events) {
      if (e.kind === 'text') said += e.text;
      else if (e.kind === 'close') query ??= e.query;
    }
    if (out.turnFinished && transcripts.length > 0) finishedAfterWords = true;
  };

  const silence = new Int16Array(CHUNK_SAMPLES);
  for (let ms = 0; ms < LEAD_SILENCE_MS; ms += CHUNK_MS) await step(silence);
  for (let at = 0; at < speech16k.length; at += CHUNK_SAMPLES) {
    const chunk = new Int16Array(CHUNK_SAMPLES);
    chunk.set(speech16k.subarray(at, at + CHUNK_SAMPLES));
    await step(chunk);
  }
  const deadline = performance.now() + MAX_WAIT_MS;
  let afterWords = 0;
  for (let i = 0; query === null && !finishedAfterWords && afterWords < STEPS_AFTER_WORDS; i++) {
    if (performance.now() > deadline) break;
    await step(silence);
    if (transcripts.length > 0) afterWords++;
    // The words and the reply's speech come from other threads: give them wall time, not only steps.
    if (i >= 8) await sleep(transcripts.length === 0 ? 20 : 5);
  }
  return { transcripts, query, said: said.replace(/\s+/g, ' ').trim(), steps: seq };
}
