import {
  BACKCHANNELS,
  BACKGROUND_LINES,
  BACKGROUND_VOICES,
  CITIES,
  COMPLETE_TURNS,
  CONTEXT_TURNS,
  DELEGATION_REQUESTS,
  fill,
  INTERRUPTIONS,
  OTHER_DIRECTED,
  PAUSED_TURNS,
  USER_VOICES,
} from './phrases.ts';
import type { DelegationKind, EvalSet, SampleMetadata, VenusEval } from './scenario.ts';
import { DELEGATION_KINDS } from './scenario.ts';
import type { ScenarioBuilder } from './scenario-builder.ts';
import type { SeededRandom } from './seeded-random.ts';

export interface GeneratedSample {
  meta: SampleMetadata & { venus_eval: VenusEval };
  input: Int16Array;
  clean: Int16Array;
}

/** Seconds of input after the last user event, so what the model does next is on the record. */
const TAIL_S = 7;
const DELEGATION_TAIL_S = 14;

export interface Draw {
  rng: SeededRandom;
  index: number;
  id: string;
  voice: string;
  levelDb: number;
  city: string;
  city2: string;
}

/** The per-sample draws every set shares: voice, level and two distinct cities. */
export function drawSample(rng: SeededRandom, index: number, id: string): Draw {
  const city = rng.pick(CITIES);
  let city2 = rng.pick(CITIES);
  while (city2 === city) city2 = rng.pick(CITIES);
  return { rng, index, id, voice: rng.pick(USER_VOICES), levelDb: rng.uniform(-28, -24), city, city2 };
}

function evalFields(
  set: EvalSet,
  d: Draw,
  expected: VenusEval['expected'],
  built: { duration: number; segments: VenusEval['segments']; transcripts: VenusEval['transcripts'] },
  delegation?: VenusEval['delegation'],
): VenusEval {
  return {
    version: 1,
    set,
    id: d.id,
    source: 'synthetic',
    expected,
    duration: built.duration,
    transcripts: built.transcripts,
    segments: built.segments,
    ...(delegation ? { delegation } : {}),
  };
}

/**
 * The v1.5 overlap sets. The user asks something the reference model answers at length; while the
 * answer plays (1.8–3.2 s after the question's transcript is sent) an overlap comes:
 * - user_interruption: the user cuts in with a new request or a correction (expected: respond);
 * - user_backchannel: "mm-hm", "yeah", softer by 0–4 dB (expected: resume);
 * - talking_to_other: the user, turned away (3–9 dB softer), speaks to someone in the room; the
 *   client's ASR transcribes it like any speech (expected: resume);
 * - background_speech: another voice 22–28 dB below the user (a television), half of them over pink
 *   noise 35 dB below; a client ASR gated by level does not transcribe it (expected: resume).
 */
export async function v15Sample(set: EvalSet, b: ScenarioBuilder, d: Draw): Promise<GeneratedSample> {
  const { rng } = d;
  const contextText = fill(rng.cycle(CONTEXT_TURNS, d.index), d.city, d.city2);
  const context = await b.say({
    role: 'user',
    text: contextText,
    voice: d.voice,
    at: rng.uniform(0.4, 0.8),
    levelDb: d.levelDb,
    transcribe: true,
  });
  const at = context.end + b.asrDelayS + rng.uniform(1.8, 3.2);
  const shift = (rng.next() * 7) | 0;
  let overlap: Awaited<ReturnType<ScenarioBuilder['say']>>;
  switch (set) {
    case 'user_interruption':
      overlap = await b.say({
        role: 'user',
        text: fill(rng.cycle(INTERRUPTIONS, d.index + shift), d.city, d.city2),
        voice: d.voice,
        at,
        levelDb: d.levelDb + rng.uniform(-1, 1),
        overlap: true,
        transcribe: true,
      });
      break;
    case 'user_backchannel':
      overlap = await b.say({
        role: 'user',
        text: rng.cycle(BACKCHANNELS, d.index + shift),
        voice: d.voice,
        at,
        levelDb: d.levelDb - rng.uniform(0, 4),
        overlap: true,
        transcribe: true,
      });
      break;
    case 'talking_to_other':
      overlap = await b.say({
        role: 'other_directed',
        text: rng.cycle(OTHER_DIRECTED, d.index + shift),
        voice: d.voice,
        at,
        levelDb: d.levelDb - rng.uniform(3, 9),
        overlap: true,
        transcribe: true,
      });
      break;
    case 'background_speech':
      overlap = await b.say({
        role: 'background',
        text: rng.cycle(BACKGROUND_LINES, d.index + shift),
        voice: rng.pick(BACKGROUND_VOICES),
        at,
        levelDb: d.levelDb - rng.uniform(22, 28),
        overlap: true,
        transcribe: false,
      });
      if (d.index % 2 === 0) b.addNoise(d.levelDb - 35, rng.fn);
      break;
    default:
      throw new Error(`${set} is not a v1.5 overlap set`);
  }
  const built = b.build(overlap.end + TAIL_S);
  return {
    meta: {
      context_text: contextText,
      current_turn_text: overlap.text,
      timestamps: [overlap.start, overlap.end],
      venus_eval: evalFields(set, d, set === 'user_interruption' ? 'respond' : 'resume', built),
    },
    input: built.input,
    clean: built.clean,
  };
}

/** v1 pause handling: one request in two parts, 1.0–2.0 s apart; `timestamps` is the pause. */
export async function pauseSample(b: ScenarioBuilder, d: Draw): Promise<GeneratedSample> {
  const [head, tail] = d.rng.cycle(PAUSED_TURNS, d.index);
  const first = await b.say({
    role: 'user',
    text: fill(head, d.city, d.city2),
    voice: d.voice,
    at: d.rng.uniform(0.4, 0.8),
    levelDb: d.levelDb,
    transcribe: true,
  });
  const second = await b.say({
    role: 'user',
    text: fill(tail, d.city, d.city2),
    voice: d.voice,
    at: first.end + d.rng.uniform(1.0, 2.0),
    levelDb: d.levelDb,
    transcribe: true,
  });
  const built = b.build(second.end + TAIL_S);
  return {
    meta: {
      context_text: '',
      current_turn_text: `${first.text} ${second.text}`,
      timestamps: [first.end, second.start],
      venus_eval: evalFields('pause_handling', d, 'hold', built),
    },
    input: built.input,
    clean: built.clean,
  };
}

/** v1 smooth turn-taking: one complete turn; `timestamps` is the turn. */
export async function turnSample(b: ScenarioBuilder, d: Draw): Promise<GeneratedSample> {
  const turn = await b.say({
    role: 'user',
    text: fill(d.rng.cycle(COMPLETE_TURNS, d.index), d.city, d.city2),
    voice: d.voice,
    at: d.rng.uniform(0.4, 0.8),
    levelDb: d.levelDb,
    transcribe: true,
  });
  const built = b.build(turn.end + TAIL_S);
  return {
    meta: {
      context_text: '',
      current_turn_text: turn.text,
      timestamps: [turn.start, turn.end],
      venus_eval: evalFields('smooth_turn_taking', d, 'take_turn', built),
    },
    input: built.input,
    clean: built.clean,
  };
}

/**
 * Delegation: the user asks for something a background function answers (weather about 2.5 s,
 * world clock about 0.3 s with the built-in functions), and then, by kind:
 * - lands_while_assistant_speaks: nothing; the result lands while the reply still plays;
 * - lands_while_user_speaks: after the reply has begun (and delegated), the user starts a long turn
 *   of their own that is still going when the result lands;
 * - cancelled: "never mind" while the reply plays: the work must be cancelled and never spoken;
 * - second_request: a second request while the first runs: both results must be delivered.
 */
export async function delegationSample(b: ScenarioBuilder, d: Draw): Promise<GeneratedSample> {
  const { rng } = d;
  const kind: DelegationKind = rng.cycle(DELEGATION_KINDS, d.index);
  const bank = kind === 'lands_while_assistant_speaks' ? DELEGATION_REQUESTS.slowOrQuick : DELEGATION_REQUESTS.slow;
  const request = await b.say({
    role: 'user',
    text: fill(rng.cycle(bank, d.index >> 2), d.city, d.city2),
    voice: d.voice,
    at: rng.uniform(0.4, 0.8),
    levelDb: d.levelDb,
    transcribe: true,
  });
  const sentAt = request.end + b.asrDelayS;
  let last = request;
  let requests = 1;
  const user = async (text: string, at: number) =>
    b.say({ role: 'user', text, voice: d.voice, at, levelDb: d.levelDb, overlap: true, transcribe: true });
  switch (kind) {
    case 'lands_while_assistant_speaks':
      break;
    case 'lands_while_user_speaks':
      last = await user(rng.pick(DELEGATION_REQUESTS.longUserTurn), sentAt + rng.uniform(1.6, 2.0));
      break;
    case 'cancelled':
      last = await user(rng.pick(DELEGATION_REQUESTS.cancels), sentAt + rng.uniform(1.6, 2.2));
      break;
    case 'second_request':
      last = await user(fill(rng.pick(DELEGATION_REQUESTS.second), d.city, d.city2), sentAt + rng.uniform(1.6, 2.2));
      requests = 2;
      break;
  }
  const built = b.build(last.end + DELEGATION_TAIL_S);
  return {
    meta: {
      context_text: request.text,
      current_turn_text: last === request ? '' : last.text,
      timestamps: [last.start, last.end],
      venus_eval: evalFields('delegation', d, kind === 'cancelled' ? 'cancel' : 'deliver', built, { kind, requests }),
    },
    input: built.input,
    clean: built.clean,
  };
}
