/**
 * What the synthetic users say. Context turns are requests the reference model answers at length
 * (so that it is speaking when the overlap comes); overlaps are written per set. `{city}` and
 * `{city2}` are filled from CITIES, all of which the built-in weather and world-clock functions know.
 */
export const USER_VOICES = ['en-us', 'en-gb', 'en-us+f3', 'en-us+m3'] as const;
/** Voices for the television / the person across the room: never the user's own voice. */
export const BACKGROUND_VOICES = ['en-gb+f4', 'en-us+m7', 'en-gb+m3', 'en-us+f2'] as const;

export const CITIES = [
  'Paris',
  'Tokyo',
  'London',
  'Berlin',
  'Rome',
  'Madrid',
  'Sydney',
  'Toronto',
  'Chicago',
  'Seattle',
  'Dubai',
  'Cairo',
  'Seoul',
] as const;

export const CONTEXT_TURNS = [
  "What's the weather in {city}?",
  'What time is it in {city}?',
  'Hello there!',
  'Can you tell me the weather in {city}?',
  'Hi, good morning!',
  'Could you tell me the local time in {city}?',
  "How's the weather in {city} today?",
  'Hey, how are you doing?',
] as const;

export const INTERRUPTIONS = [
  'Actually, what time is it in {city2}?',
  "Wait, what's the weather like in {city2} instead?",
  'Sorry to cut in, but can you check the weather in {city2}?',
  'Hold on, how much is fifteen times twelve?',
  'No, no, I meant {city2}.',
  'Hang on, I have a different question.',
  'Excuse me, could you speak a little more slowly?',
  'Stop, tell me the time in {city2} instead.',
] as const;

export const BACKCHANNELS = [
  'Mm-hm.',
  'Uh-huh.',
  'Yeah.',
  'Okay.',
  'Right.',
  'I see.',
  'Sure.',
  'Got it.',
  'Yeah, yeah.',
  'Oh, okay.',
] as const;

export const OTHER_DIRECTED = [
  'Honey, can you grab the mail?',
  "Hey Sam, I'll be right there.",
  'Just put it on the table, thanks.',
  'Kids, dinner is ready!',
  'Can you turn the music down a bit?',
  'No, the blue one, by the door.',
  "Mom, I'm on the phone.",
  'Thanks, just leave it there.',
] as const;

export const BACKGROUND_LINES = [
  'And now, back to the studio for the evening news.',
  'Traffic on the northbound highway is moving slowly this morning.',
  'Stay tuned, there is more right after the break.',
  'The home team scored twice in the final minutes of the match.',
  'Tonight we look at the history of the old lighthouse.',
  'Prices at the market rose again over the summer.',
  'Call now and get a second one absolutely free.',
  'The museum opens its new wing to visitors next month.',
] as const;

/** v1 pause handling: one request said in two parts with a long pause between them. */
export const PAUSED_TURNS: readonly (readonly [string, string])[] = [
  ['Could you tell me', 'the weather in {city}?'],
  ["I'd like to know the weather", 'in {city}, please.'],
  ['So what I want to know is', 'the time in {city}.'],
  ['Let me think, what is', 'twelve times fifteen?'],
  ['Can you check', 'what time it is in {city}?'],
  ['Hmm, how is the weather', 'over in {city} today?'],
];

/** v1 smooth turn-taking: complete turns the model should answer. */
export const COMPLETE_TURNS = [
  "What's the weather in {city}?",
  'What time is it in {city}?',
  'Hello there!',
  'What is twelve times fifteen?',
  'Can you tell me the weather in {city}?',
  'Good evening!',
  'Could you tell me the local time in {city}?',
  'How much is forty plus seventeen?',
] as const;

export const DELEGATION_REQUESTS = {
  /** A slow function (weather, about 2.5 s) or a quick one (world clock) while the reply plays. */
  slowOrQuick: ["What's the weather in {city}?", 'What time is it in {city}?'],
  slow: ["What's the weather in {city}?", 'Can you tell me the weather in {city}?'],
  longUserTurn: [
    "Oh, and by the way, I'm flying out early on Thursday morning, so I want everything packed by tonight.",
    'Also, my sister is coming to visit next week, and we still have not decided where to go together.',
    'And after that I have a long meeting with the whole team, so I will be pretty busy all afternoon.',
  ],
  cancels: ['Never mind.', 'Forget it.', 'Cancel that.', 'Actually, never mind.'],
  second: ['And what time is it in {city2}?', 'Also, what time is it in {city2}?'],
} as const;

export function fill(template: string, city: string, city2: string): string {
  return template.replaceAll('{city2}', city2).replaceAll('{city}', city);
}
