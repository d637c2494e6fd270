import { mixInto, normalizeTo, pinkNoise } from '../eval/audio/signal.ts';
import type { SeededRandom } from '../eval/scenarios/seeded-random.ts';
import { biquad, changeSpeed, musicBed, reverb, telephone } from './mix.ts';
import {
  fillCity,
  HELD_OUT_BACKGROUND,
  HELD_OUT_CITIES,
  HELD_OUT_ESPEAK,
  HELD_OUT_FLITE,
  HELD_OUT_PHRASES,
  type OverlapClass,
  TRAIN_CITIES,
  TRAIN_FESTIVAL,
  TRAIN_PHRASES,
  TRAIN_SPEAKERS,
} from './phrases.ts';
import type { Speaker, SpeechBank } from './speech-bank.ts';

const RATE = 16_000;

/** Everything one clip is made from, drawn from the seed (so the clip can be rebuilt and described). */
export interface ClipPlan {
  id: string;
  split: 'train' | 'heldout';
  cls: OverlapClass;
  user: Speaker;
  /** The other voice of a background clip (the user's voice otherwise). */
  overlapSpeaker: Speaker;
  contextText: string;
  overlapText: string;
  userDb: number;
  overlapDb: number;
  speed: number;
  telephone: boolean;
  /** The assistant's own speech leaking into the microphone, dB relative to the user; null for none. */
  echoDb: number | null;
  background: { lowpassHz: number; highpassHz: number; rt60S: number; musicDb: number | null; noiseDb: number | null };
}

export interface Clip {
  plan: ClipPlan;
  audio: Float32Array;
  /** Where the assistant speaks, and where the overlap is, in seconds. */
  assistant: [number, number];
  overlap: [number, number];
}

export function planClip(
  rng: SeededRandom,
  id: string,
  split: ClipPlan['split'],
  cls: OverlapClass,
  flite: boolean,
  /** A training clip in a Festival voice (the second training engine) instead of an eSpeak one. */
  festival = false,
): ClipPlan {
  const train = split === 'train';
  const trainUsers = festival ? TRAIN_FESTIVAL : TRAIN_SPEAKERS;
  const users = train ? trainUsers : flite && rng.next() < 0.5 ? HELD_OUT_FLITE : HELD_OUT_ESPEAK;
  const user = rng.pick(users);
  const trainOthers = festival ? [...TRAIN_SPEAKERS, ...TRAIN_FESTIVAL] : TRAIN_SPEAKERS;
  let others = train ? trainOthers.filter((s) => s.voice !== user.voice) : HELD_OUT_BACKGROUND;
  if (!train && user.engine === 'flite') others = HELD_OUT_FLITE.filter((s) => s.voice !== user.voice);
  const phrases = train ? TRAIN_PHRASES : HELD_OUT_PHRASES;
  const city = rng.pick(train ? TRAIN_CITIES : HELD_OUT_CITIES);
  const userDb = rng.uniform(-30, -22);
  // Level ranges overlap across classes, so that loudness alone cannot separate them.
  const offset = { interruption: [-4, 2], backchannel: [-6, 1], other_directed: [-10, 0], background: [-28, -6] }[cls];
  let overlapText = fillCity(rng.pick(phrases.lines[cls]), city);
  if (cls === 'background' && rng.next() < 0.5) overlapText += ` ${fillCity(rng.pick(phrases.lines.background), city)}`;
  return {
    id,
    split,
    cls,
    user,
    overlapSpeaker: cls === 'background' ? rng.pick(others) : user,
    contextText: fillCity(rng.pick(phrases.context), city),
    overlapText,
    userDb,
    overlapDb: userDb + rng.uniform(offset[0]!, offset[1]!),
    speed: rng.pick([0.9, 0.95, 1, 1, 1.05, 1.1]),
    telephone: rng.next() < 0.3,
    echoDb: rng.next() < 0.3 ? -rng.uniform(25, 38) : null,
    background: {
      lowpassHz: rng.uniform(2500, 5000),
      highpassHz: rng.uniform(150, 400),
      rt60S: rng.uniform(0.3, 0.9),
      musicDb: rng.next() < 0.5 ? -rng.uniform(4, 14) : null,
      noiseDb: rng.next() < 0.4 ? -rng.uniform(12, 25) : null,
    },
  };
}

const ASSISTANT_TEXT =
  'The forecast says it will be mostly sunny with a light breeze, and the temperature should reach about twenty degrees by the afternoon, so a jacket for the evening is a good idea.';
const ASSISTANT: Speaker = { engine: 'espeak', voice: 'en-us' };

/** The clip's 16 kHz microphone audio: the user's request, then, while the assistant answers, the overlap. */
export async function renderClip(bank: SpeechBank, plan: ClipPlan, rng: SeededRandom): Promise<Clip> {
  const context = normalizeTo(await bank.speech(plan.contextText, plan.user), plan.userDb);
  let overlap = changeSpeed(await bank.speech(plan.overlapText, plan.overlapSpeaker), plan.speed);
  const bg = plan.background;
  if (plan.cls === 'background') {
    overlap = reverb(biquad(biquad(overlap, 'highpass', bg.highpassHz), 'lowpass', bg.lowpassHz), bg.rt60S, rng.fn);
    if (bg.musicDb !== null) mixInto(overlap, normalizeTo(musicBed(overlap.length, rng.fn), bg.musicDb - 26), 0);
  }
  overlap = normalizeTo(overlap, plan.overlapDb);
  const contextAt = 0.3;
  const assistantAt = contextAt + context.length / RATE + 0.6;
  const overlapAt = assistantAt + rng.uniform(0.8, 2.0);
  const overlapEnd = overlapAt + overlap.length / RATE;
  const end = overlapEnd + 0.9;
  const audio = new Float32Array(Math.ceil(end * RATE));
  mixInto(audio, context, Math.round(contextAt * RATE));
  mixInto(audio, overlap, Math.round(overlapAt * RATE));
  if (plan.echoDb !== null) {
    const echo = normalizeTo(await bank.speech(ASSISTANT_TEXT, ASSISTANT), plan.userDb + plan.echoDb);
    mixInto(audio, echo.subarray(0, audio.length - Math.round(assistantAt * RATE)), Math.round(assistantAt * RATE));
  }
  if (plan.cls === 'background' && bg.noiseDb !== null)
    mixInto(audio, pinkNoise(audio.length, plan.overlapDb + bg.noiseDb, rng.fn), 0);
  const out = plan.telephone ? telephone(audio).subarray(0, audio.length) : audio;
  return { plan, audio: out, assistant: [assistantAt, end], overlap: [overlapAt, overlapEnd] };
}
