import {
  BACKCHANNELS,
  BACKGROUND_LINES,
  BACKGROUND_VOICES,
  CONTEXT_TURNS,
  INTERRUPTIONS,
  OTHER_DIRECTED,
  USER_VOICES,
} from '../eval/scenarios/phrases.ts';
import type { Speaker } from './speech-bank.ts';

/**
 * Who says what in the overlap clips. TRAIN voices and phrases are disjoint from the HELD-OUT
 * ones: the held-out set is the evaluation's own user and television voices (`eval/scenarios`)
 * saying the evaluation's own lines, plus Flite, an engine never used in training.
 */
export type OverlapClass = 'interruption' | 'backchannel' | 'other_directed' | 'background';
export const CLASSES: readonly OverlapClass[] = ['interruption', 'backchannel', 'other_directed', 'background'];

const TRAIN_BASES = ['en-gb-scotland', 'en-gb-x-rp', 'en-029', 'en-us-nyc', 'en-gb-x-gbclan', 'en-gb-x-gbcwmd'];
const TRAIN_VARIANTS = ['', '+f1', '+f2', '+m1', '+m2', '+m4', '+f5', '+m6'];
export const TRAIN_SPEAKERS: readonly Speaker[] = TRAIN_BASES.flatMap((b) =>
  TRAIN_VARIANTS.map((v) => ({ engine: 'espeak' as const, voice: `${b}${v}` })),
);
/**
 * The second training engine: Festival's `ked` diphone voice (an American English male speaker
 * that none of the held-out engines has; Festival's `kal` and `slt` voices are the speakers of
 * held-out Flite voices and are not used), at its own pitch and shifted by sox to make four speakers.
 */
export const TRAIN_FESTIVAL: readonly Speaker[] = ['ked', 'ked-300c', 'ked+400c', 'ked+700c'].map((voice) => ({
  engine: 'festival',
  voice,
}));
export const HELD_OUT_ESPEAK: readonly Speaker[] = USER_VOICES.map((voice) => ({ engine: 'espeak', voice }));
export const HELD_OUT_BACKGROUND: readonly Speaker[] = BACKGROUND_VOICES.map((voice) => ({ engine: 'espeak', voice }));
export const HELD_OUT_FLITE: readonly Speaker[] = ['slt', 'rms', 'awb', 'kal16'].map((voice) => ({
  engine: 'flite',
  voice,
}));

export const TRAIN_CITIES = ['Osaka', 'Denver', 'Lisbon', 'Athens', 'Dublin', 'Bangkok', 'Moscow', 'Delhi'];
export const HELD_OUT_CITIES = ['Paris', 'Tokyo', 'London', 'Berlin', 'Rome', 'Madrid', 'Sydney', 'Dubai'];

export interface PhraseBank {
  context: readonly string[];
  lines: Record<OverlapClass, readonly string[]>;
}

export const TRAIN_PHRASES: PhraseBank = {
  context: [
    'What is the weather like in {city}?',
    'Tell me the time in {city}, please.',
    'Good afternoon!',
    "How's the weather in {city} right now?",
  ],
  lines: {
    interruption: [
      'Actually, make it Thursday.',
      'Wait, first tell me the time in {city}.',
      'Stop, that is enough.',
      'No, I said {city}.',
      'Hold on, what is the weather in {city}?',
      'Never mind, cancel that.',
      'Sorry, can you repeat that?',
      'Actually, I need the time in {city} instead.',
      'Wait, wait, go back.',
      'Forget it, what time is it?',
    ],
    backchannel: [
      'Mm-hm.',
      'Uh-huh.',
      'Yeah.',
      'Okay.',
      'Right.',
      'Sure.',
      'Yep.',
      'Oh really?',
      'Hmm.',
      'Okay, okay.',
      'Ha ha.',
      'Yes, yes.',
    ],
    other_directed: [
      'Honey, where are my keys?',
      'John, one minute.',
      'Can you pass the salt?',
      "Anna, I'll be right there.",
      'Mike, close the door please.',
      'Sweetie, not now.',
      'Dad, can you help me with this?',
      'Tom, give me a second.',
      'Sarah, did you feed the dog?',
      'Put the bags in the car, thanks.',
    ],
    background: [
      'Coming up after the weather, the latest from the city council.',
      'This program is brought to you by our listeners.',
      'In sports tonight, a stunning comeback in the second half.',
      'Scattered showers are expected along the coast this weekend.',
      'Our next guest has written three books about gardening.',
      'The orchestra will perform the second movement after the interval.',
      'Shares closed higher today after a volatile session.',
      'Welcome back to the morning show, it is a lovely day out there.',
    ],
  },
};

export const HELD_OUT_PHRASES: PhraseBank = {
  context: CONTEXT_TURNS,
  lines: {
    interruption: INTERRUPTIONS,
    backchannel: BACKCHANNELS,
    other_directed: OTHER_DIRECTED,
    background: BACKGROUND_LINES,
  },
};

export function fillCity(text: string, city: string): string {
  return text.replaceAll('{city2}', city).replaceAll('{city}', city);
}
