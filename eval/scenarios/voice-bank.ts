import { EspeakTts, resamplePcm16 } from '@venus/gpu-worker';
import { toFloat, trimSilence } from '../audio/signal.ts';
import { EVAL_RATE_HZ } from '../audio/wav-io.ts';

/**
 * Synthetic voices for the scenarios: eSpeak NG speech at 16 kHz with its leading and trailing
 * silence trimmed, so that the timestamps written into a sample's metadata are where speech is.
 * Results are cached by (voice, text): the sets reuse a small phrase bank many times.
 *
 * @example
 *   const bank = await VoiceBank.create();
 *   const speech = await bank.speech('Mm-hm.', 'en-gb'); // Float32Array, 16 kHz
 *   bank.close();
 */
export class VoiceBank {
  private readonly cache = new Map<string, Float32Array>();

  private constructor(private readonly tts: EspeakTts) {}

  static async create(): Promise<VoiceBank> {
    return new VoiceBank(await EspeakTts.create({ cacheSize: 4 }));
  }

  async speech(text: string, voice: string): Promise<Float32Array> {
    const key = `${voice}\n${text}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const pcm24k = await this.tts.synthesize(text, voice);
    const samples = trimSilence(toFloat(resamplePcm16(pcm24k, 24_000, EVAL_RATE_HZ)), EVAL_RATE_HZ);
    this.cache.set(key, samples);
    return samples;
  }

  close(): void {
    this.tts.close();
  }
}
