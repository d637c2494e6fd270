/**
 * The reference model's language understanding: deliberately narrow, pattern-based readings of
 * typed text. Requests: weather and world time in a city, calculations and unit conversions,
 * greetings, and asking what the assistant just said. Overlap while the assistant speaks:
 * backchannels, cancels, bare stops and corrections.
 * Everything here is pure and synchronous.
 *
 * @example
 *   understandRequest("what's the weather like in paris?"); // { kind: 'weather', city: 'Paris' }
 *   readOverlap('mm-hm'); // 'backchannel'
 */
import { DEMO_CITIES } from '../perception/pocketsphinx/demo-vocabulary.ts';
import { numberWordsToDigits } from './number-words.ts';

export type RequestIntent =
  /** `when`: set only for a forecast the user asked for ("... tomorrow"); current conditions otherwise. */
  | { kind: 'weather'; city: string; when?: 'tomorrow' }
  | { kind: 'time'; city: string }
  | { kind: 'calc'; expression: string };

export type Understanding =
  | RequestIntent
  | { kind: 'missing_city'; for: 'weather' | 'time' }
  | { kind: 'greeting' }
  | { kind: 'status' }
  /** "What did you just tell me?": the model says again what the user last heard from it. */
  | { kind: 'recall' }
  | { kind: 'unknown' };

export type OverlapReading = 'backchannel' | 'cancel' | 'stop' | 'correction' | 'other';

const WEATHER = /\b(weather|temperature|forecast|rain|raining|rainy|sunny|snow|snowing|windy|humid|humidity|degrees)\b/;
const TIME = /\b(what time|the time|time is it|local time|time in|time at|clock in)\b/;
/** "How's that going?": a question about delegated work, answered from its work state. */
const STATUS =
  /\b(how ?s (that|it) (going|coming)|how is (that|it) (going|coming)|any (update|news)|is it (done|ready)|what ?s the status|status (update|of))\b/;
const RECALL =
  /\b(what did you (just )?(say|tell me)|what (was|were) you (just )?saying|say (that|it) again|repeat (that|it|yourself|what you said)|come again)\b/;
const CALC_WORD =
  /\b(convert|calculate|compute|plus|minus|times|multiplied|divided|over|percent|squared|cubed|square root|power|how many|how much is)\b/;
const CALC_SYMBOL = /\d\s*[-+*/x×÷^%]\s*\d|\d\s*%/;
const CONVERSION = /\d\s*[a-z°]+\s+(to|in|into)\s+[a-z°]+/;
const GREETING = /^(hi|hello|hey|hiya|howdy|good (morning|afternoon|evening)|greetings)\b/;

/** Words that follow a city name in speech-like requests and are not part of it. */
const CITY_TAIL = new Set([
  'right',
  'now',
  'today',
  'tonight',
  'tomorrow',
  'please',
  'then',
  'instead',
  'currently',
  'like',
  'at',
  'the',
  'moment',
  'is',
  'it',
  'there',
  'again',
]);
const CITY_HEAD = new Set(['the', 'city', 'of', 'in', 'for', 'at']);
/** Words that show a bare reply ("no, that's wrong") is not a city name. */
const NOT_A_CITY = new Set(
  'a an and are be but can did do does i is it its me my not of on or s said so that the this to was we what wrong you your'.split(
    ' ',
  ),
);

const BACKCHANNEL_PHRASES = new Set([
  'mm',
  'mmm',
  'hm',
  'hmm',
  'mhm',
  'mm hm',
  'mm hmm',
  'mmhm',
  'mmhmm',
  'uh huh',
  'uhhuh',
  'yeah',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'k',
  'right',
  'sure',
  'got it',
  'i see',
  'alright',
  'all right',
  'cool',
  'great',
  'nice',
  'oh',
  'ah',
  'aha',
  'true',
  'exactly',
  'of course',
  'go on',
  'i know',
  'makes sense',
]);

const CANCEL = /\b(never ?mind|nevermind|cancel( that| it| this)?|forget (it|that|about it))\b/;
const BARE_STOP =
  /^((ok|okay|no|please|hey|oh)\s+)?(stop|wait|hold on|hang on|one (sec|second|moment)|just a (sec|second|moment))(\s+(please|a (sec|second|moment|minute|bit)))?$/;
const CORRECTION_START =
  /^(actually|no|nope|nah|i meant|i mean|make it|make that|instead|rather|sorry i meant|sorry i mean|not that|how about|what about)\b/;
const CORRECTION_MARKERS =
  /\b(actually|no|nope|nah|sorry|i meant|i mean|make it|make that|instead|rather|how about|what about|not that|then|please)\b/gi;
const AFFIRMATIVE =
  /^(yes|yeah|yep|yup|sure|ok|okay|go ahead|please do|please|yes please|sure go ahead|yes go ahead|do it|go on|why not|of course|absolutely|please go ahead|yes please do)$/;
const NEGATIVE =
  /^(no|nope|nah|no thanks|no thank you|not now|no need|don t|dont|never mind|nevermind|forget it|no that s fine)$/;

/** Lower case, punctuation and hyphens as spaces, single spaces. */
export function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’']/g, "'")
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .replace(/'/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** User text as it may enter a delegate span: no markup, no control characters, bounded. */
export function sanitizeUserText(text: string, maxChars = 500): string {
  return text
    .replace(/[<>]/g, ' ')
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, maxChars);
}

function titleCase(words: string[]): string {
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

function cleanCity(words: string[]): string | null {
  let city = words;
  while (city.length > 0 && CITY_HEAD.has(city[0]!)) city = city.slice(1);
  while (city.length > 0 && CITY_TAIL.has(city[city.length - 1]!)) city = city.slice(0, -1);
  if (city.length === 0 || city.length > 3 || city.some((w) => /\d/.test(w))) return null;
  return titleCase(city);
}

/** The demo's cities as normalized words, longest first (so "new york" is tried before any shorter name). */
const KNOWN_CITIES = DEMO_CITIES.map((city) => ({ city, words: normalize(city).split(' ') })).sort(
  (a, b) => b.words.length - a.words.length,
);

/** The known city the words start with ("seoul hello anna" -> Seoul), or null. */
function knownCityAt(words: readonly string[]): string | null {
  const found = KNOWN_CITIES.find((c) => c.words.every((w, i) => words[i] === w));
  return found?.city ?? null;
}

/**
 * A city named after the last "in/for/at" that names one, or the whole (short) text when `bare` is set.
 * A city the demo knows is taken as it is, whatever follows it: recognised speech often carries
 * other words after it ("what is the time in amsterdam right now anna").
 */
export function extractCity(text: string, bare = false): string | null {
  const words = normalize(text).split(' ').filter(Boolean);
  for (let i = words.length - 2; i >= 0; i--) {
    if (!['in', 'for', 'at'].includes(words[i]!)) continue;
    const known = knownCityAt(words.slice(i + 1));
    if (known) return known;
    const city = cleanCity(words.slice(i + 1));
    if (city) return city;
  }
  if (!bare || words.some((w) => NOT_A_CITY.has(w))) return null;
  return cleanCity(words);
}

export function understandRequest(text: string): Understanding {
  const n = normalize(text);
  if (STATUS.test(n)) return { kind: 'status' };
  if (RECALL.test(n)) return { kind: 'recall' };
  if (TIME.test(n)) {
    const city = extractCity(text);
    return city ? { kind: 'time', city } : { kind: 'missing_city', for: 'time' };
  }
  if (WEATHER.test(n)) {
    const city = extractCity(text);
    if (!city) return { kind: 'missing_city', for: 'weather' };
    return /\btomorrow\b/.test(n) ? { kind: 'weather', city, when: 'tomorrow' } : { kind: 'weather', city };
  }
  // Speech has no digits: "fifteen times four" is read (and delegated) as "15 times 4".
  const withDigits = numberWordsToDigits(text);
  const lower = withDigits.toLowerCase();
  if (
    /\d/.test(lower) &&
    (CALC_WORD.test(normalize(withDigits)) || CALC_SYMBOL.test(lower) || CONVERSION.test(lower))
  ) {
    return { kind: 'calc', expression: sanitizeUserText(withDigits) };
  }
  if (GREETING.test(n)) return { kind: 'greeting' };
  return { kind: 'unknown' };
}

function isBackchannel(n: string): boolean {
  const words = n.split(' ').filter(Boolean);
  if (words.length === 0) return false;
  // Covers the words with known phrases, longest first, so "yeah right got it" counts too.
  let i = 0;
  while (i < words.length) {
    let matched = 0;
    for (let len = Math.min(3, words.length - i); len >= 1; len--) {
      if (BACKCHANNEL_PHRASES.has(words.slice(i, i + len).join(' '))) {
        matched = len;
        break;
      }
    }
    if (matched === 0) return false;
    i += matched;
  }
  return true;
}

/** How typed text reads when it overlaps the assistant's speech. */
export function readOverlap(text: string): OverlapReading {
  const n = normalize(text);
  if (CANCEL.test(n)) return 'cancel';
  if (BARE_STOP.test(n)) return 'stop';
  if (isBackchannel(n)) return 'backchannel';
  if (CORRECTION_START.test(n) || /\binstead\b/.test(n)) return 'correction';
  return 'other';
}

/**
 * The new slot a correction carries for an intent of `kind`: "actually, Rome" -> Rome; for a
 * calculation, the corrected expression as typed.
 */
export function correctionSlot(text: string, kind: RequestIntent['kind']): RequestIntent | null {
  if (kind === 'calc') {
    const withDigits = numberWordsToDigits(text);
    if (!/\d/.test(withDigits)) return null;
    const stripped = sanitizeUserText(withDigits.replace(CORRECTION_MARKERS, ' ').replace(/^[\s,.;:!?-]+/, ''));
    return stripped ? { kind: 'calc', expression: stripped } : null;
  }
  const full = understandRequest(text);
  if (full.kind === kind) return full;
  const rest = normalize(text).replace(CORRECTION_MARKERS, ' ');
  const city = extractCity(rest, true);
  return city ? { kind, city } : null;
}

export function isAffirmative(text: string): boolean {
  return AFFIRMATIVE.test(normalize(text));
}

export function isNegative(text: string): boolean {
  return NEGATIVE.test(normalize(text));
}
