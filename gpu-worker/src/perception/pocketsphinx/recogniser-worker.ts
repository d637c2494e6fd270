import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { concatPcm } from '@venus/protocol';
import { compileGrammar } from './grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from './pocketsphinx-wasm.ts';
import { Pronunciations } from './pronunciations.ts';
import {
  DECODER_OPTIONS,
  type MainToRecogniser,
  type RecogniserToMain,
  scoreToConfidence,
} from './recogniser-protocol.ts';
import { BandMeter, TelephoneMap } from './telephone-band.ts';

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
  /** Measures the stream's speech until its band is known (then null). */
  meter: BandMeter | null;
  /** 'narrow': telephone-band speech, decoded through the telephone map (telephone-band.ts). */
  band: 'narrow' | 'wide' | null;
  /** Whether the utterance in progress goes through the map (fixed when its decoding starts). */
  mapped: boolean;
  /**
   * Audio of the utterance held undecoded while the band is unknown (the running cepstral mean must
   * learn from the features the stream will be decoded with, so the first frames wait for the
   * decision rather than being decoded one way and the rest another). At most BAND_WAIT_SAMPLES.
   */
  pending: Int16Array[] | null;
  pendingSamples: number;
}

/** Audio an utterance waits for the band decision (1 s); past it, it is decoded as full-band. */
const BAND_WAIT_SAMPLES = 16 * 1000;

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
const telephoneMap = TelephoneMap.load();
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
        meter: new BandMeter(),
        band: null,
        mapped: false,
        pending: null,
        pendingSamples: 0,
      });
      post({ t: 'opened', stream: message.stream, unknownWords: grammar.unknownWords });
      return;
    }
    case 'audio': {
      const s = streams.get(message.stream);
      if (!s) return;
      if (!s.inUtterance) {
        s.inUtterance = true;
        s.samples = 0;
        s.lastPartial = '';
        s.audio = [];
        s.pending = [];
        s.pendingSamples = 0;
      }
      decode(s, message.pcm);
      s.samples += message.pcm.length;
      if (s.samples <= SECOND_PASS_MAX_SAMPLES) s.audio.push(message.pcm);
      const hyp = s.pending ? null : ps.hypothesis(s.decoder);
      if (hyp && hyp.text !== '' && hyp.text !== s.lastPartial) {
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
      if (s.pending) startDecoding(s);
      endUtterance(s);
      s.inUtterance = false;
      let hyp = ps.hypothesis(s.decoder);
      if ((s.utterance < SECOND_PASS_UTTERANCES || hyp.text === '') && s.samples <= SECOND_PASS_MAX_SAMPLES) {
        startUtterance(s, concatPcm(s.audio));
        endUtterance(s);
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

/**
 * Decodes a piece of the utterance: held while the stream's band is unknown, then (once known, or
 * after BAND_WAIT_SAMPLES) decoded from the start of the utterance.
 */
function decode(s: StreamState, pcm: Int16Array): void {
  if (s.meter) {
    s.meter.push(pcm);
    const band = s.meter.verdict;
    if (band !== null) {
      s.band = band;
      s.meter = null;
    }
  }
  if (s.pending) {
    s.pending.push(pcm);
    s.pendingSamples += pcm.length;
    if (s.meter && s.pendingSamples < BAND_WAIT_SAMPLES) return;
    startDecoding(s);
    return;
  }
  if (s.mapped) ps.processCepstra(s.decoder, telephoneMap.apply(ps.cepstra(s.decoder, pcm, false, false)));
  else ps.process(s.decoder, pcm);
}

/** Starts the decoder's utterance and decodes the audio held for the band decision. */
function startDecoding(s: StreamState): void {
  const held = concatPcm(s.pending ?? []);
  s.pending = null;
  s.pendingSamples = 0;
  startUtterance(s, held);
}

/** Starts the decoder's utterance with `pcm`, through the telephone map if the stream is narrow-band. */
function startUtterance(s: StreamState, pcm: Int16Array): void {
  ps.start(s.decoder);
  s.mapped = s.band === 'narrow';
  if (s.mapped) ps.processCepstra(s.decoder, telephoneMap.apply(ps.cepstra(s.decoder, pcm, true, false)));
  else ps.process(s.decoder, pcm);
}

/** Ends the decoder's utterance; a mapped one first gets the front end's last partial frame. */
function endUtterance(s: StreamState): void {
  if (s.mapped) ps.processCepstra(s.decoder, telephoneMap.apply(ps.cepstra(s.decoder, new Int16Array(0), false, true)));
  ps.end(s.decoder);
}

function perFrame(hyp: { score: number; frames: number }): number {
  return hyp.frames > 0 ? hyp.score / hyp.frames : 0;
}
