import { ReferenceModelPort } from '@venus/gpu-worker';
import { telephone } from '../../training/mix.ts';
import { fliteAvailable, SpeechBank } from '../../training/speech-bank.ts';
import { normalizeTo, toPcm16 } from '../audio/signal.ts';
import { buildRequests, DEFAULT_MIX, type RequestMix, SPEAKERS, type SpokenRequest, speakerName } from './requests.ts';
import { type ScoredTrial, verdictOf, wordScore } from './score.ts';
import { Harness, runTrial } from './trial.ts';

export interface SpokenDelegationOptions {
  seed: string;
  /** Requests per speaker by topic. */
  mix?: RequestMix;
  /** Only the requests of the seed's set that pass, e.g. for a quick check. */
  only?: (request: SpokenRequest) => boolean;
  /** These requests instead of the seed's set (tests). */
  requests?: readonly SpokenRequest[];
  /** Each request clean and through the 8 kHz μ-law round trip (default both). */
  bands?: readonly ('clean' | 'telephone')[];
  /** Called after every trial. */
  onTrial?: (trial: ScoredTrial, done: number, total: number) => void;
}

export interface SpokenDelegationRun {
  seed: string;
  mix: RequestMix;
  speakers: string[];
  /** Speakers left out because their engine is not installed (Flite). */
  skipped: string[];
  trials: ScoredTrial[];
  seconds: number;
}

/**
 * Says every request of the seed's set in its held-out voice (clean and telephone-band) to the
 * reference model, one fresh session each, and routes each delegated query through the harness.
 * The reference model runs as `npm start` runs it: `ReferenceModelPort.create()` with its default
 * recognition (the demo grammar) and one inference thread.
 */
export async function evaluateSpokenDelegation(options: SpokenDelegationOptions): Promise<SpokenDelegationRun> {
  const started = performance.now();
  const mix = options.mix ?? DEFAULT_MIX;
  const flite = fliteAvailable();
  const wanted = options.requests ? [...new Set(options.requests.map((r) => r.speaker))] : SPEAKERS;
  const speakers = wanted.filter((s) => s.engine !== 'flite' || flite);
  const skipped = wanted.filter((s) => !speakers.includes(s)).map(speakerName);
  const requests = (options.requests ?? buildRequests(options.seed, speakers, mix)).filter(
    (r) => speakers.includes(r.speaker) && (options.only?.(r) ?? true),
  );
  const bands = options.bands ?? ['clean', 'telephone'];
  const total = requests.length * bands.length;
  const bank = await SpeechBank.create();
  const port = await ReferenceModelPort.create({ inferenceThreads: 1, ttsThreads: 1 });
  const harness = new Harness();
  const trials: ScoredTrial[] = [];
  try {
    for (const request of requests) {
      const clean = normalizeTo(await bank.speech(request.text, request.speaker), request.levelDb);
      for (const band of bands) {
        const audio = band === 'clean' ? clean : telephone(clean).subarray(0, clean.length);
        const outcome = await runTrial(port, harness, `${request.id}:${band}`, toPcm16(audio));
        const transcript = outcome.transcripts.map((t) => t.text).join(' ');
        const trial: ScoredTrial = {
          id: `${request.id}:${band}`,
          speaker: speakerName(request.speaker),
          engine: request.speaker.engine,
          band,
          topic: request.topic,
          text: request.text,
          expected: request.expected,
          transcript,
          inGrammar: outcome.transcripts.every((t) => t.inGrammar) && outcome.transcripts.length > 0,
          query: outcome.query,
          plan: outcome.plan,
          answered: outcome.answered,
          verdict: verdictOf(request.expected, outcome.query, outcome.plan),
          words: wordScore(request.text, transcript),
        };
        trials.push(trial);
        options.onTrial?.(trial, trials.length, total);
      }
    }
  } finally {
    await port.close();
    bank.close();
  }
  return {
    seed: options.seed,
    mix,
    speakers: speakers.map(speakerName),
    skipped,
    trials,
    seconds: (performance.now() - started) / 1000,
  };
}
