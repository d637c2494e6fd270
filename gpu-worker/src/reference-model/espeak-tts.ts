import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { VenusError } from '@venus/protocol';
import ESpeakNg, { type ESpeakNgModule } from 'espeak-ng';
import { LruCache } from './lru-cache.ts';
import { resamplePcm16 } from './resample.ts';
import { parseWav } from './wav.ts';

export interface EspeakTtsOptions {
  /** Entries in the (voice, text) -> audio cache. Default 64. */
  cacheSize?: number;
}

interface Instance {
  module: ESpeakNgModule;
  memory: WebAssembly.Memory;
  malloc: (bytes: number) => number;
  /** Linear memory as it stood before the first run: restoring it makes the instance new again. */
  pristine: Uint8Array;
  openStreams: number;
}

const OUTPUT_RATE_HZ = 24_000;
const VOICE_PATTERN = /^[a-z]{2,3}(-[a-z0-9]{1,8})*(\+[a-z0-9]{1,16})?$/i;

function countStreams(module: ESpeakNgModule): number {
  return module.FS.streams.filter(Boolean).length;
}

/**
 * Speech synthesis with eSpeak NG (the `espeak-ng` npm package, GPL-3.0-or-later, an Emscripten
 * build whose 18 MB wasm embeds the voice data). Instantiating that module costs ~160 ms, while a
 * sentence takes ~25 ms to synthesise; the CLI it wraps keeps state between runs (getopt), so it
 * cannot simply be called twice. Instead the module is compiled and instantiated once, its linear
 * memory is snapshotted before the first run, and every synthesis restores the snapshot (~3 ms)
 * and runs the CLI's `main` again: byte-identical output to a fresh instance. Output is 24 kHz mono
 * PCM16, resampled from espeak's 22.05 kHz, with a small LRU cache by (voice, text). This class is
 * CPU-bound: run it in a worker thread, never on an event loop that serves sockets.
 *
 * @example
 *   const tts = await EspeakTts.create();
 *   const pcm24k = await tts.synthesize('Let me work that out.', 'en-us');
 */
export class EspeakTts {
  private readonly cache: LruCache<string, Int16Array>;
  private instance: Promise<Instance>;
  private closed = false;

  private constructor(
    private readonly wasm: WebAssembly.Module,
    cacheSize: number,
  ) {
    this.cache = new LruCache(cacheSize);
    this.instance = this.instantiate();
  }

  static async create(options: EspeakTtsOptions = {}): Promise<EspeakTts> {
    const wasmPath = createRequire(import.meta.url).resolve('espeak-ng/dist/espeak-ng.wasm');
    const wasm = await WebAssembly.compile(await readFile(wasmPath));
    const tts = new EspeakTts(wasm, options.cacheSize ?? 64);
    // One throwaway synthesis compiles the hot paths, so the first real request is not the slowest.
    await tts.synthesize('Ready.');
    return tts;
  }

  /** 24 kHz mono speech for `text`; the returned array is the caller's to keep or transfer. */
  async synthesize(text: string, voice = 'en-us'): Promise<Int16Array> {
    if (this.closed) throw new VenusError('model_unavailable', 'speech synthesiser is closed');
    const safeVoice = VOICE_PATTERN.test(voice) ? voice : 'en-us';
    const key = `${safeVoice}\n${text}`;
    const hit = this.cache.get(key);
    if (hit) return hit.slice();
    if (text.trim() === '') return new Int16Array(0);
    const instance = await this.instance;
    let pcm: Int16Array;
    try {
      pcm = this.run(instance, text, safeVoice);
    } catch (err) {
      // A failed run may leave the runtime in any state: start the next one from a new instance.
      this.instance = this.instantiate();
      throw err;
    }
    this.cache.set(key, pcm);
    return pcm.slice();
  }

  close(): void {
    this.closed = true;
  }

  private async instantiate(): Promise<Instance> {
    let exports: WebAssembly.Exports | null = null;
    const module = await ESpeakNg({
      noInitialRun: true,
      print: () => undefined,
      printErr: () => undefined,
      instantiateWasm: (imports, receive) => {
        WebAssembly.instantiate(this.wasm, imports).then(
          (instance) => {
            exports = instance.exports;
            receive(instance, this.wasm);
          },
          () => undefined,
        );
        return {};
      },
    });
    const ready = exports as WebAssembly.Exports | null;
    if (!ready) throw new VenusError('model_unavailable', 'espeak-ng instance has no exports');
    const memory = ready.memory as WebAssembly.Memory;
    return {
      module,
      memory,
      malloc: ready.malloc as (bytes: number) => number,
      pristine: new Uint8Array(memory.buffer).slice(),
      openStreams: countStreams(module),
    };
  }

  private run(instance: Instance, text: string, voice: string): Int16Array {
    const { module, memory, malloc, pristine } = instance;
    const heap = new Uint8Array(memory.buffer);
    heap.set(pristine);
    heap.fill(0, pristine.length);
    // Text goes through a file, never argv, so text that starts with '-' is not read as an option.
    module.FS.writeFile('/in.txt', text);
    const args = ['espeak-ng', '-b', '1', '-v', voice, '-w', '/out.wav', '-f', '/in.txt'];
    const encoder = new TextEncoder();
    const pointers = args.map((arg) => {
      const bytes = encoder.encode(`${arg}\0`);
      const at = malloc(bytes.length);
      new Uint8Array(memory.buffer).set(bytes, at);
      return at;
    });
    const argv = malloc(4 * (args.length + 1));
    const table = new Uint32Array(memory.buffer, argv, args.length + 1);
    pointers.forEach((p, i) => {
      table[i] = p;
    });
    table[args.length] = 0;
    let rc: number;
    try {
      rc = module._main(args.length, argv);
    } catch (err) {
      // Emscripten reports exit() by throwing ExitStatus; its status says whether it succeeded.
      const exit = err as { name?: string; status?: number };
      if (exit.name !== 'ExitStatus')
        throw new VenusError('model_step_failed', `espeak-ng failed: ${String(err)}`, { cause: err });
      rc = exit.status ?? 1;
    }
    if (rc !== 0) throw new VenusError('model_step_failed', `espeak-ng exited with status ${rc}`);
    if (countStreams(module) !== instance.openStreams) {
      throw new VenusError('model_step_failed', 'espeak-ng left files open; the instance is replaced');
    }
    const wav = parseWav(module.FS.readFile('/out.wav'));
    return resamplePcm16(wav.samples, wav.sampleRateHz, OUTPUT_RATE_HZ);
  }
}
