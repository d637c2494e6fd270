import { execFileSync, type StdioOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toFloat, trimSilence } from '../eval/audio/signal.ts';
import { readWav } from '../eval/audio/wav-io.ts';
import { VoiceBank } from '../eval/scenarios/voice-bank.ts';

/** A synthetic speaker: an engine and one of its voices. */
export interface Speaker {
  engine: 'espeak' | 'flite' | 'festival';
  /** The engine's voice; for Festival, `ked` or `ked+<cents>c` (the voice shifted in pitch by sox). */
  voice: string;
}

/**
 * Speech for the overlap clips at 16 kHz, trimmed of silence: eSpeak NG through the runtime's own
 * wasm build (the eval's VoiceBank), Flite through Debian's `flite` command (the held-out engine;
 * `apt-get install flite`), Festival through Debian's `text2wave` with its `ked` diphone voice (the
 * second training engine; `apt-get install festival festvox-kdlpc16k`), pitch-shifted by sox's
 * `pitch` effect (tempo kept) for its variants. Cached by speaker and text; the cache holds at most
 * MAX_CACHED clips.
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
    const file = join(this.dir, `${speaker.engine}.wav`);
    if (speaker.engine === 'flite') execFileSync('flite', ['-voice', speaker.voice, '-t', text, '-o', file]);
    else this.festival(text, speaker.voice, file);
    const samples = trimSilence(toFloat(readWav(file)), 16_000);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, samples);
    return samples;
  }

  private festival(text: string, voice: string, file: string): void {
    const [name, cents] = parseFestivalVoice(voice);
    const raw = cents === 0 ? file : join(this.dir, 'festival-raw.wav');
    // Festival's notes on missing diphones and sox's on clipped samples are kept out of the log (stderr
    // is still captured, and thrown with the error if the command fails).
    const quiet: { stdio: StdioOptions } = { stdio: ['pipe', 'ignore', 'pipe'] };
    execFileSync('text2wave', ['-eval', `(voice_${name}_diphone)`, '-o', raw], { ...quiet, input: text });
    if (cents !== 0)
      execFileSync('sox', ['-V1', raw, '-r', '16000', file, 'pitch', String(cents), 'rate', '16000'], quiet);
  }

  close(): void {
    this.espeak.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `ked` -> ['ked', 0]; `ked+400c` -> ['ked', 400] (cents of pitch shift). */
function parseFestivalVoice(voice: string): [string, number] {
  const m = /^([a-z_]+)(?:([+-]\d+)c)?$/.exec(voice);
  if (!m) throw new Error(`festival voice ${JSON.stringify(voice)}: expected a name with an optional +<cents>c`);
  return [m[1]!, m[2] === undefined ? 0 : Number(m[2])];
}

/** Whether Festival and its `ked` diphone voice are installed (the second training engine is skipped without them). */
export function festivalAvailable(): boolean {
  try {
    execFileSync('text2wave', ['-eval', '(voice_ked_diphone)', '-o', '/dev/null'], {
      input: 'ok',
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    return true;
  } catch {
    return false;
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
