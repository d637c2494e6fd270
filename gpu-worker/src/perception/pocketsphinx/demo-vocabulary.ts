import type { RecogniserGrammar } from '@venus/protocol';

/**
 * What the reference model's demo domain lets a user say: weather and time in a city, calculations
 * on two spoken numbers ("what is fifteen times four"), corrections
 * ("actually, make it London"), cancels, stops, backchannels, status questions. The cities are those
 * the built-in weather sample and world clock know. `grammar-from-vocabulary.ts` adds registered
 * functions' examples and keywords to this, and `recogniser/build/make-dictionary.ts` cuts the
 * shipped pronunciation dictionary from cmudict for exactly these words (plus a few spares).
 */
export const DEMO_CITIES: readonly string[] = [
  'Paris',
  'London',
  'New York',
  'Tokyo',
  'Sydney',
  'Berlin',
  'Madrid',
  'Rome',
  'Moscow',
  'Beijing',
  'Shanghai',
  'Hong Kong',
  'Singapore',
  'Mumbai',
  'Delhi',
  'Dubai',
  'Cairo',
  'Lagos',
  'Nairobi',
  'Johannesburg',
  'Sao Paulo',
  'Buenos Aires',
  'Mexico City',
  'Los Angeles',
  'Chicago',
  'Toronto',
  'Vancouver',
  'Seattle',
  'San Francisco',
  'Seoul',
  'Osaka',
  'Bangkok',
  'Istanbul',
  'Dublin',
  'Lisbon',
  'Amsterdam',
  'Stockholm',
  'Athens',
  'Denver',
  'Melbourne',
  'Auckland',
  'Honolulu',
];

export const DEMO_PHRASES: readonly string[] = [
  // Requests.
  "what's the weather in <city>",
  'what is the weather in <city>',
  "what's the weather like in <city>",
  "how's the weather in <city>",
  'is it raining in <city>',
  'weather in <city>',
  'what time is it in <city>',
  "what's the time in <city>",
  'what is the time in <city>',
  'the time in <city>',
  'right now',
  'today',
  'tomorrow',
  'please',
  // Corrections: "actually" + "make it <city>".
  'make it <city>',
  'in <city>',
  '<city>',
  'instead',
  // Interruptions and cancels.
  'stop',
  'wait',
  'hold on',
  'actually',
  'no',
  'never mind',
  'cancel that',
  'forget it',
  'first tell me',
  // Backchannels and answers.
  'yes',
  'yeah',
  'mm-hm',
  'uh-huh',
  'okay',
  'right',
  'sure',
  'go on',
  'thank you',
  'thanks',
  'hello',
  'hi',
  // Words that show speech is addressed to someone else (the overlap head's addressee cue): with
  // them in the grammar, "honey, ..." is heard as "honey" rather than forced onto a command.
  'honey',
  'mom',
  'dad',
  'kids',
  'sweetie',
  'hey <name>',
  '<name>',
  'one minute',
  'just a second',
  'can you',
  // Status questions.
  "how's that going",
  'how is it going',
  'any update',
  // Calculations, read as digits by the reference model ("fifteen times four" -> "15 times 4").
  'what is <number> <operator> <number>',
  "what's <number> <operator> <number>",
  'how much is <number> <operator> <number>',
  '<number> <operator> <number>',
];

const UNIT_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEEN_WORDS = [
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS_WORDS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/**
 * The numbers a calculation can say: zero to ninety-nine, whole hundreds, a thousand. Kept to these
 * (113 entries) so the grammar stays small next to the weather and time requests; the reference
 * model reads larger spoken numbers too (`number-words.ts`).
 */
export const DEMO_NUMBERS: readonly string[] = [
  'zero',
  ...UNIT_WORDS,
  ...TEEN_WORDS,
  ...TENS_WORDS.flatMap((tens) => [tens, ...UNIT_WORDS.map((unit) => `${tens} ${unit}`)]),
  'a hundred',
  ...UNIT_WORDS.map((unit) => `${unit} hundred`),
  'a thousand',
  'one thousand',
];

/** What the calculator reads between two numbers (`harness-functions`' arithmetic: + - * / and "% of"). */
export const DEMO_OPERATORS: readonly string[] = [
  'plus',
  'minus',
  'times',
  'multiplied by',
  'divided by',
  'percent of',
];

/** First names a user may call someone else in the room by. */
export const DEMO_NAMES: readonly string[] = ['John', 'Sam', 'Anna', 'Mike', 'Sarah', 'Tom', 'Emma', 'David', 'Lisa'];

export const DEMO_GRAMMAR: RecogniserGrammar = {
  phrases: DEMO_PHRASES,
  slots: { city: DEMO_CITIES, name: DEMO_NAMES, number: DEMO_NUMBERS, operator: DEMO_OPERATORS },
};
