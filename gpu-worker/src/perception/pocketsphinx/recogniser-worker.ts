import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compileGrammar } from './grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from './pocketsphinx-wasm.ts';
import { Pronunciations } from './pronunciations.ts';
import {
  DECODER_OPTIONS,
  type MainToRecogniser,
  type RecogniserToMain,
  scoreToConfidence,
} from './recogniser-protocol.ts';

/**
 * The recogniser's worker thread: one wasm module, one grammar decoder per stream. Audio is decoded
 * as it arrives (streaming); a partial is posted whenever the best hypothesis changes.
 */
const port = parentPort!;
const post = (message: RecogniserToMain) => port.postMessage(message);
const pronunciations = Pronunciations.load(MODEL_DIR);

interface StreamState {
  decoder: number;
  utterance: number;
  inUtterance: boolean;
  samples: number;
  lastPartial: string;
  /** The utterance's audio, kept while a second pass may need it (see SECOND_PASS_UTTERANCES). */
  audio: Int16Array[];
}

/**
 * PocketSphinx normalises cepstra with a running mean (live CMN) that starts from the model's
 * prior: a fresh decoder's first utterances are decoded against a mean that fits no real voice yet
 * (measured: the first utterance of a fresh decoder came out empty or wrong on most eSpeak clips,
 * the same clip right after came out right). So a stream's first utterances, and any that ends
 * with no words, are decoded a second time once the mean has adapted to them.
 */
const SECOND_PASS_UTTERANCES = 2;
/** Audio kept per utterance for the second pass (16 kHz samples): 15 s, ~480 KB per stream at most. */
const SECOND_PASS_MAX_SAMPLES = 16 * 15_000;

const ps = await PocketSphinxWasm.load();
const streams = new Map<number, StreamState>();

port.on('message', (message: MainToRecogniser) => {
  try {
    handle(message);
  } catch (err) {
    post({ t: 'error', stream: 'stream' in message ? message.stream : -1, message: String(err) });
  }
});
post({ t: 'ready' });

/** This thread's CPU time (user + system) in ms, from Linux's per-thread stat; NaN elsewhere. */
function threadCpuMs(): number {
  try {
    const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

function handle(message: MainToRecogniser): void {
  switch (message.t) {
    case 'cpu':
      post({ t: 'cpu', id: message.id, ms: threadCpuMs() });
      return;
    case 'open': {
      const grammar = compileGrammar(message.grammar, (w) => pronunciations.has(w));
      const decoder = ps.openGrammar(grammar.jsgf, DECODER_OPTIONS, pronunciations.dictionaryFor(grammar.words));
      streams.set(message.stream, {
        decoder,
        utterance: 0,
        inUtterance: false,
        samples: 0,
        lastPartial: '',
        audio: [],
      });
      post({ t: 'opened', stream: message.stream, unknownWords: grammar.unknownWords });
      return;
    }
    case 'audio': {
      const s = streams.get(message.stream);
      if (!s) return;
      if (!s.inUtterance) {
        ps.start(s.decoder);
        s.inUtterance = true;
        s.samples = 0;
        s.lastPartial = '';
        s.audio = [];
      }
      ps.process(s.decoder, message.pcm);
      s.samples += message.pcm.length;
      if (s.samples <= SECOND_PASS_MAX_SAMPLES) s.audio.push(message.pcm);
      const hyp = ps.hypothesis(s.decoder);
      if (hyp.text !== '' && hyp.text !== s.lastPartial) {
        s.lastPartial = hyp.text;
        post({
          t: 'partial',
          stream: message.stream,
          event: {
            type: 'partial',
            utterance: s.utterance,
            text: hyp.text,
            score: perFrame(hyp),
            audioMs: s.samples / 16,
          },
        });
      }
      post({ t: 'consumed', stream: message.stream, samples: message.pcm.length });
      return;
    }
    case 'end': {
      const s = streams.get(message.stream);
      if (!s?.inUtterance) return;
      ps.end(s.decoder);
      s.inUtterance = false;
      let hyp = ps.hypothesis(s.decoder);
      if ((s.utterance < SECOND_PASS_UTTERANCES || hyp.text === '') && s.samples <= SECOND_PASS_MAX_SAMPLES) {
        ps.start(s.decoder);
        for (const pcm of s.audio) ps.process(s.decoder, pcm);
        ps.end(s.decoder);
        hyp = ps.hypothesis(s.decoder);
      }
      s.audio = [];
      const score = perFrame(hyp);
      const confidence = hyp.text === '' ? 0 : scoreToConfidence(score);
      post({
        t: 'final',
        stream: message.stream,
        event: {
          type: 'final',
          utterance: s.utterance,
          text: hyp.text,
          score,
          confidence,
          inGrammar: confidence >= 0.5,
          audioMs: s.samples / 16,
        },
      });
      s.utterance += 1;
      return;
    }
    case 'close': {
      const s = streams.get(message.stream);
      if (s) ps.free(s.decoder);
      streams.delete(message.stream);
      post({ t: 'closed', stream: message.stream });
      return;
    }
  }
}

function perFrame(hyp: { score: number; frames: number }): number {
  return hyp.frames > 0 ? hyp.score / hyp.frames : 0;
}
