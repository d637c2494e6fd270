import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toFloat, trimSilence } from '../eval/audio/signal.ts';
import { readWav } from '../eval/audio/wav-io.ts';
import { VoiceBank } from '../eval/scenarios/voice-bank.ts';

/** A synthetic speaker: an engine and one of its voices. */
export interface Speaker {
  engine: 'espeak' | 'flite';
  voice: string;
}

/**
 * Speech for the overlap clips at 16 kHz, trimmed of silence: eSpeak NG through the runtime's own
 * wasm build (the eval's VoiceBank), Flite through Debian's `flite` command (the held-out engine;
 * `apt-get install flite`). Cached by speaker and text; the cache holds at most MAX_CACHED clips.
 */
const MAX_CACHED = 2000;

export class SpeechBank {
  private readonly cache = new Map<string, Float32Array>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'overlap-speech-'));

  private constructor(private readonly espeak: VoiceBank) {}

  static async create(): Promise<SpeechBank> {
    return new SpeechBank(await VoiceBank.create());
  }

  async speech(text: string, speaker: Speaker): Promise<Float32Array> {
    if (speaker.engine === 'espeak') return this.espeak.speech(text, speaker.voice);
    const key = `${speaker.voice}\n${text}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const file = join(this.dir, 'flite.wav');
    execFileSync('flite', ['-voice', speaker.voice, '-t', text, '-o', file]);
    const samples = trimSilence(toFloat(readWav(file)), 16_000);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, samples);
    return samples;
  }

  close(): void {
    this.espeak.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether Debian's flite is installed (the held-out engine is skipped without it, and the report says so). */
export function fliteAvailable(): boolean {
  try {
    execFileSync('flite', ['-lv'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
