import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compileGrammar } from './grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from './pocketsphinx-wasm.ts';
import { Pronunciations } from './pronunciations.ts';
import { DECODER_OPTIONS, type MainToRecogniser, type RecogniserToMain } from './recogniser-protocol.ts';
import { StreamDecoder } from './stream-decoder.ts';
import { TelephoneMap } from './telephone-band.ts';

/**
 * The recogniser's worker thread: one wasm module, one grammar decoder per stream. Audio is decoded
 * as it arrives (streaming); a partial is posted whenever the best hypothesis changes.
 */
const port = parentPort!;
const post = (message: RecogniserToMain) => port.postMessage(message);
const pronunciations = Pronunciations.load(MODEL_DIR);

const ps = await PocketSphinxWasm.load();
const telephoneMap = TelephoneMap.load();
const streams = new Map<number, StreamDecoder>();

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
      streams.set(message.stream, new StreamDecoder(ps, telephoneMap, decoder));
      post({ t: 'opened', stream: message.stream, unknownWords: grammar.unknownWords });
      return;
    }
    case 'audio': {
      const s = streams.get(message.stream);
      if (!s) return;
      const partial = s.push(message.pcm);
      if (partial) post({ t: 'partial', stream: message.stream, event: partial });
      post({ t: 'consumed', stream: message.stream, samples: message.pcm.length });
      return;
    }
    case 'end': {
      const final = streams.get(message.stream)?.end();
      if (final) post({ t: 'final', stream: message.stream, event: final });
      return;
    }
    case 'close': {
      streams.get(message.stream)?.free();
      streams.delete(message.stream);
      post({ t: 'closed', stream: message.stream });
      return;
    }
  }
}
