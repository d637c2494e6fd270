import { DEMO_CITIES } from '@venus/gpu-worker';
import { HELD_OUT_ESPEAK, HELD_OUT_FLITE } from '../../training/phrases.ts';
import type { Speaker } from '../../training/speech-bank.ts';
import { SeededRandom } from '../scenarios/seeded-random.ts';

/** What the harness should run for a request: a function and its arguments (defaults filled in). */
export interface ExpectedCall {
  functionName: string;
  args: Record<string, unknown>;
}

/** What a request asks for, as the report groups them. */
export type RequestTopic = 'weather' | 'time' | 'calculation';

/** One spoken request: what is said, by whom, and what should run. */
export interface SpokenRequest {
  id: string;
  topic: RequestTopic;
  text: string;
  speaker: Speaker;
  expected: ExpectedCall;
  /** Active speech level the clip is normalised to (dBFS). */
  levelDb: number;
}

interface Template {
  topic: RequestTopic;
  /** `{city}` is replaced by a demo city. */
  text: string;
  expected: (city: string) => ExpectedCall;
}

const weather = (when: 'now' | 'tomorrow') => (city: string) => ({ functionName: 'weather', args: { city, when } });
const time = (city: string) => ({ functionName: 'world_clock', args: { city, ask: 'time' } });

/**
 * Requests a user of the demo can say: the phrasings of the demo grammar (`demo-vocabulary.ts`),
 * which the reference model's rules (`intents.ts`) read as weather or time in a city.
 */
export const WEATHER_TEMPLATES: readonly Template[] = [
  { topic: 'weather', text: "What's the weather in {city}?", expected: weather('now') },
  { topic: 'weather', text: 'What is the weather in {city}?', expected: weather('now') },
  { topic: 'weather', text: "What's the weather like in {city}?", expected: weather('now') },
  { topic: 'weather', text: "How's the weather in {city}?", expected: weather('now') },
  { topic: 'weather', text: 'Is it raining in {city}?', expected: weather('now') },
  { topic: 'weather', text: 'What is the weather in {city} right now?', expected: weather('now') },
  { topic: 'weather', text: "What's the weather in {city} tomorrow?", expected: weather('tomorrow') },
];

export const TIME_TEMPLATES: readonly Template[] = [
  { topic: 'time', text: 'What time is it in {city}?', expected: time },
  { topic: 'time', text: "What's the time in {city}?", expected: time },
  { topic: 'time', text: 'What is the time in {city} right now?', expected: time },
];

/**
 * Calculations: part of the reference model's domain (`intents.ts` delegates text with digits and
 * an operator), said the only way speech can say them, in words.
 */
export const CALCULATIONS: readonly { text: string; expression: string }[] = [
  { text: 'What is twelve plus seven?', expression: '12 + 7' },
  { text: 'What is fifteen times four?', expression: '15 * 4' },
  { text: 'How much is one hundred divided by eight?', expression: '100 / 8' },
  { text: 'What is nine minus three?', expression: '9 - 3' },
  { text: 'What is twenty percent of fifty?', expression: '20 % of 50' },
];

/** The held-out speakers: the evaluation's user voices (eSpeak NG) and Flite, never used in training. */
export const SPEAKERS: readonly Speaker[] = [...HELD_OUT_ESPEAK, ...HELD_OUT_FLITE];

export interface RequestMix {
  weather: number;
  time: number;
  calculation: number;
}

/** Per speaker: half weather, a third time, a sixth calculations. */
export const DEFAULT_MIX: RequestMix = { weather: 6, time: 4, calculation: 2 };

export function speakerName(speaker: Speaker): string {
  return `${speaker.engine}:${speaker.voice}`;
}

/**
 * The request set of a seed: for every speaker, `mix` requests, each with a template, a city and a
 * level drawn from `SeededRandom(seed:speaker:i)`, so the same seed gives the same set anywhere.
 *
 * @example
 *   buildRequests('7', [{ engine: 'flite', voice: 'slt' }], { weather: 1, time: 0, calculation: 0 });
 *   // [{ id: 'flite:slt:0', text: "How's the weather in Seoul?", expected: { functionName: 'weather', ... } }]
 */
export function buildRequests(
  seed: string,
  speakers: readonly Speaker[] = SPEAKERS,
  mix: RequestMix = DEFAULT_MIX,
): SpokenRequest[] {
  const requests: SpokenRequest[] = [];
  for (const speaker of speakers) {
    const name = speakerName(speaker);
    const topics: RequestTopic[] = [
      ...Array<RequestTopic>(mix.weather).fill('weather'),
      ...Array<RequestTopic>(mix.time).fill('time'),
      ...Array<RequestTopic>(mix.calculation).fill('calculation'),
    ];
    topics.forEach((topic, i) => {
      const rng = new SeededRandom(`${seed}:${name}:${i}`);
      const levelDb = Math.round(rng.uniform(-32, -20) * 10) / 10;
      const id = `${name}:${i}`;
      if (topic === 'calculation') {
        const calc = rng.pick(CALCULATIONS);
        requests.push({
          id,
          topic,
          text: calc.text,
          speaker,
          levelDb,
          expected: { functionName: 'calculator', args: { kind: 'arithmetic', expression: calc.expression } },
        });
        return;
      }
      const template = rng.pick(topic === 'weather' ? WEATHER_TEMPLATES : TIME_TEMPLATES);
      const city = rng.pick(DEMO_CITIES);
      requests.push({
        id,
        topic,
        text: template.text.replace('{city}', city),
        speaker,
        levelDb,
        expected: template.expected(city),
      });
    });
  }
  return requests;
}
