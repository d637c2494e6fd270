import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Speech for recogniser tests and benches: the eSpeak NG binary says `text` in `voice`, sox makes it
 * 16 kHz 16-bit mono with 300 ms of silence either side (as a VAD-cut utterance has). `dir` is a
 * scratch folder the caller owns.
 */
export function speechClip(dir: string, text: string, voice = 'en-us'): Int16Array {
  const wav = path.join(dir, 'clip.wav');
  const raw = path.join(dir, 'clip.raw');
  execFileSync('espeak-ng', ['-v', voice, '-w', wav, text]);
  // -D: no dither. sox dithers by default when it requantises, with fresh noise every run, and the
  // recogniser's hypotheses on some voices turn on that noise: the same clip must be the same bytes.
  execFileSync('sox', [
    '-D',
    wav,
    '-r',
    '16000',
    '-c',
    '1',
    '-b',
    '16',
    '-e',
    'signed-integer',
    '-t',
    'raw',
    raw,
    'pad',
    '0.3',
    '0.3',
  ]);
  const bytes = readFileSync(raw);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}
