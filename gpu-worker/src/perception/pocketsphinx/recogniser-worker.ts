import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compileGrammar } from './grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from './pocketsphinx-wasm.ts';
import { type MainToRecogniser, type RecogniserToMain, scoreToConfidence } from './recogniser-protocol.ts';

/**
 * The recogniser's worker thread: one wasm module, one grammar decoder per stream. Audio is decoded
 * as it arrives (streaming); a partial is posted whenever the best hypothesis changes.
 */
const port = parentPort!;
const post = (message: RecogniserToMain) => port.postMessage(message);
const words = new Set(
  readFileSync(new URL('demo.dict', MODEL_DIR), 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[0]!.replace(/\(\d+\)$/, '')),
);

interface StreamState {
  decoder: number;
  utterance: number;
  inUtterance: boolean;
  samples: number;
  lastPartial: string;
}

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

function handle(message: MainToRecogniser): void {
  switch (message.t) {
    case 'open': {
      const grammar = compileGrammar(message.grammar, (w) => words.has(w));
      const decoder = ps.openGrammar(grammar.jsgf);
      streams.set(message.stream, { decoder, utterance: 0, inUtterance: false, samples: 0, lastPartial: '' });
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
      }
      ps.process(s.decoder, message.pcm);
      s.samples += message.pcm.length;
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
      if (!s || !s.inUtterance) return;
      ps.end(s.decoder);
      s.inUtterance = false;
      const hyp = ps.hypothesis(s.decoder);
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
