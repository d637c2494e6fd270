import type { RecogniserGrammar } from '@venus/protocol';

/**
 * What the reference model's demo domain lets a user say: weather and time in a city, corrections
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
];

/** First names a user may call someone else in the room by. */
export const DEMO_NAMES: readonly string[] = ['John', 'Sam', 'Anna', 'Mike', 'Sarah', 'Tom', 'Emma', 'David', 'Lisa'];

export const DEMO_GRAMMAR: RecogniserGrammar = {
  phrases: DEMO_PHRASES,
  slots: { city: DEMO_CITIES, name: DEMO_NAMES },
};
