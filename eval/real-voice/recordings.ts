import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseWav, resamplePcm16 } from '@venus/gpu-worker';

/**
 * Real human recordings shipped in Debian packages, read where the packages put them (never copied
 * into this repository).
 */
export interface Recording {
  /** Short name, e.g. `alsa/Front_Center`. */
  id: string;
  /** The Debian package it comes from, and its licence as that package's copyright file states it. */
  source: RecordingSource;
  /** What is said, lower case; null for a recording with no speech in it. */
  text: string | null;
  /** 16 kHz mono. */
  pcm: Int16Array;
}

export interface RecordingSource {
  name: string;
  /** How to get it on a Debian machine. */
  install: string;
  licence: string;
  /** What the recordings are, in a few words. */
  what: string;
}

export const ALSA_DIR = '/usr/share/sounds/alsa';

export const ALSA_UTILS: RecordingSource = {
  name: 'alsa-utils',
  install: 'apt-get install alsa-utils',
  licence:
    'GPL-2 (Debian copyright file of alsa-utils, `Files: *`; the sounds are installed by the package and covered by it)',
  what: "the speaker-test channel names, one real (male) voice, 48 kHz; plus speaker-test's noise file",
};

export const POCKETSPHINX_SOURCE: RecordingSource = {
  name: 'pocketsphinx (Debian source package, test/data)',
  install:
    'a deb-src entry, then `apt-get source pocketsphinx` in out/real-voice/ (or pass --pocketsphinx-src DIR, the unpacked source)',
  licence:
    'BSD-2 (Debian copyright file of pocketsphinx, `Files: *`: Carnegie Mellon University, Alpha Cephei Inc.); the LibriVox excerpts are public-domain audiobook readings',
  what: 'CMU test recordings: "go forward ten meters", five spoken card hands, five LibriVox sentences (Sense and Sensibility)',
};

/** The ALSA file names say what is said: `Front_Center` -> "front center". Noise.wav has no speech. */
export function alsaRecordings(dir = ALSA_DIR): Recording[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.wav'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -4);
      return {
        id: `alsa/${name}`,
        source: ALSA_UTILS,
        text: name === 'Noise' ? null : name.replace(/_/g, ' ').toLowerCase(),
        pcm: readWav16k(path.join(dir, f)),
      };
    });
}

/**
 * The recordings of the pocketsphinx source package's test data whose words the package states:
 * goforward.raw (its unit tests expect "go forward ten meters"), cards/*.wav (cards.transcription)
 * and librivox/*.wav (transcription). `root` is the unpacked source, or a folder holding it.
 */
export function pocketsphinxRecordings(root: string | undefined): Recording[] {
  const data = root === undefined ? undefined : findTestData(root);
  if (!data) return [];
  const out: Recording[] = [];
  const goForward = path.join(data, 'goforward.raw');
  if (existsSync(goForward)) {
    const bytes = readFileSync(goForward);
    out.push({
      id: 'pocketsphinx/goforward',
      source: POCKETSPHINX_SOURCE,
      text: 'go forward ten meters',
      pcm: new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)),
    });
  }
  for (const [folder, list] of [
    ['cards', 'cards.transcription'],
    ['librivox', 'transcription'],
  ] as const) {
    const file = path.join(data, folder, list);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^<s>\s*(.*?)\s*<\/s>\s*\(([^)]+)\)/.exec(line.trim());
      if (!m) continue;
      const wav = path.join(data, folder, `${m[2]}.wav`);
      if (!existsSync(wav)) continue;
      out.push({
        id: `pocketsphinx/${folder}/${m[2]}`,
        source: POCKETSPHINX_SOURCE,
        text: m[1]!.replace(/\s+/g, ' '),
        pcm: readWav16k(wav),
      });
    }
  }
  return out;
}

function findTestData(root: string): string | undefined {
  const direct = path.join(root, 'test', 'data');
  if (existsSync(path.join(direct, 'goforward.raw'))) return direct;
  if (!existsSync(root)) return undefined;
  for (const entry of readdirSync(root).sort()) {
    const data = path.join(root, entry, 'test', 'data');
    if (entry.startsWith('pocketsphinx') && existsSync(path.join(data, 'goforward.raw'))) return data;
  }
  return undefined;
}

function readWav16k(file: string): Int16Array {
  const wav = parseWav(readFileSync(file));
  return wav.sampleRateHz === 16_000 ? wav.samples : resamplePcm16(wav.samples, wav.sampleRateHz, 16_000);
}
