import { VenusError } from '@venus/protocol';

export const UNIT_CATEGORIES = ['length', 'mass', 'temperature', 'volume', 'speed'] as const;
export type UnitCategory = (typeof UNIT_CATEGORIES)[number];

interface Unit {
  id: string;
  category: UnitCategory;
  singular: string;
  plural: string;
  /** Value in the category's base unit (m, kg, m³, m/s) of one of this unit; temperature converts by formula. */
  factor: number;
  aliases: readonly string[];
}

function unit(
  id: string,
  category: UnitCategory,
  factor: number,
  singular: string,
  plural: string,
  aliases: readonly string[],
): Unit {
  return { id, category, factor, singular, plural, aliases };
}

const UNITS: readonly Unit[] = [
  unit('mm', 'length', 0.001, 'millimeter', 'millimeters', ['mm', 'millimetre', 'millimetres']),
  unit('cm', 'length', 0.01, 'centimeter', 'centimeters', ['cm', 'centimetre', 'centimetres']),
  unit('m', 'length', 1, 'meter', 'meters', ['m', 'metre', 'metres']),
  unit('km', 'length', 1000, 'kilometer', 'kilometers', ['km', 'kms', 'kilometre', 'kilometres']),
  unit('in', 'length', 0.0254, 'inch', 'inches', ['in']),
  unit('ft', 'length', 0.3048, 'foot', 'feet', ['ft']),
  unit('yd', 'length', 0.9144, 'yard', 'yards', ['yd', 'yds']),
  unit('mi', 'length', 1609.344, 'mile', 'miles', ['mi']),
  unit('nmi', 'length', 1852, 'nautical mile', 'nautical miles', ['nmi']),
  unit('mg', 'mass', 1e-6, 'milligram', 'milligrams', ['mg', 'milligramme', 'milligrammes']),
  unit('g', 'mass', 0.001, 'gram', 'grams', ['g', 'gramme', 'grammes']),
  unit('kg', 'mass', 1, 'kilogram', 'kilograms', ['kg', 'kgs', 'kilo', 'kilos', 'kilogramme', 'kilogrammes']),
  unit('t', 'mass', 1000, 'tonne', 'tonnes', ['metric ton', 'metric tons', 'ton', 'tons']),
  unit('oz', 'mass', 0.028349523125, 'ounce', 'ounces', ['oz']),
  unit('lb', 'mass', 0.45359237, 'pound', 'pounds', ['lb', 'lbs']),
  unit('st', 'mass', 6.35029318, 'stone', 'stone', ['stones']),
  unit('ml', 'volume', 1e-6, 'milliliter', 'milliliters', ['ml', 'millilitre', 'millilitres']),
  unit('l', 'volume', 0.001, 'liter', 'liters', ['l', 'litre', 'litres']),
  unit('m3', 'volume', 1, 'cubic meter', 'cubic meters', ['m3', 'cubic metre', 'cubic metres']),
  unit('tsp', 'volume', 4.92892159375e-6, 'teaspoon', 'teaspoons', ['tsp']),
  unit('tbsp', 'volume', 1.478676478125e-5, 'tablespoon', 'tablespoons', ['tbsp']),
  unit('floz', 'volume', 2.95735295625e-5, 'fluid ounce', 'fluid ounces', ['fl oz', 'floz']),
  unit('cup', 'volume', 2.365882365e-4, 'cup', 'cups', []),
  unit('pt', 'volume', 4.73176473e-4, 'pint', 'pints', ['pt']),
  unit('qt', 'volume', 9.46352946e-4, 'quart', 'quarts', ['qt']),
  unit('gal', 'volume', 3.785411784e-3, 'gallon', 'gallons', ['gal', 'gals']),
  unit('m/s', 'speed', 1, 'meter per second', 'meters per second', ['m/s', 'mps', 'metres per second']),
  unit('km/h', 'speed', 1000 / 3600, 'kilometer per hour', 'kilometers per hour', [
    'km/h',
    'kmh',
    'kph',
    'kmph',
    'km per hour',
    'kilometres per hour',
  ]),
  unit('mph', 'speed', 0.44704, 'mile per hour', 'miles per hour', ['mph', 'mi/h']),
  unit('kn', 'speed', 0.514444, 'knot', 'knots', ['kn', 'kt', 'kts']),
  unit('ft/s', 'speed', 0.3048, 'foot per second', 'feet per second', ['ft/s', 'fps']),
  unit('c', 'temperature', 1, 'degree Celsius', 'degrees Celsius', ['c', '°c', 'celsius', 'centigrade']),
  unit('f', 'temperature', 1, 'degree Fahrenheit', 'degrees Fahrenheit', ['f', '°f', 'fahrenheit']),
  unit('k', 'temperature', 1, 'kelvin', 'kelvins', ['k', 'kelvin', 'kelvins']),
];

const BY_ID = new Map(UNITS.map((u) => [u.id, u]));
const BY_NAME = new Map<string, Unit>();
for (const u of UNITS) {
  for (const name of [u.id, u.singular, u.plural, ...u.aliases]) BY_NAME.set(name.toLowerCase(), u);
}

/** Every spelling the converter understands, for router vocabulary. */
export const UNIT_WORDS: readonly string[] = [...BY_NAME.keys()].filter((name) => /^[a-z][a-z ]+$/.test(name));

/**
 * Looks a unit up by what people say ("miles per hour", "degrees F", "kms"); a trailing word that is
 * not part of the unit ("km please") is dropped. Returns the unit id or null.
 */
export function findUnit(phrase: string): string | null {
  const words = phrase
    .toLowerCase()
    .replace(/[?!,]/g, ' ')
    .replace(/\.(?=\s|$)/g, ' ')
    .replace(/\b(?:degrees?|deg)\s+/g, '')
    .trim()
    .split(/\s+/)
    .filter((word) => word !== '' && word !== 'a' && word !== 'an' && word !== 'the');
  for (let length = words.length; length > 0; length--) {
    const found = BY_NAME.get(words.slice(0, length).join(' '));
    if (found !== undefined) return found.id;
  }
  return null;
}

export interface Conversion {
  value: number;
  from: string;
  to: string;
  result: number;
  category: UnitCategory;
}

/** Converts between two units of one category; throws VenusError('invalid_arguments') with a speakable message. */
export function convertUnits(value: number, fromId: string, toId: string): Conversion {
  const from = BY_ID.get(fromId);
  const to = BY_ID.get(toId);
  if (from === undefined || to === undefined) {
    throw new VenusError('invalid_arguments', `I don't know the unit ${from === undefined ? fromId : toId}`);
  }
  if (from.category !== to.category) {
    throw new VenusError('invalid_arguments', `I can't convert ${from.plural} to ${to.plural}`);
  }
  const result =
    from.category === 'temperature' ? fromKelvin(toKelvin(value, from.id), to.id) : (value * from.factor) / to.factor;
  return { value, from: from.id, to: to.id, result: Number(result.toPrecision(12)), category: from.category };
}

function toKelvin(value: number, id: string): number {
  if (id === 'c') return value + 273.15;
  if (id === 'f') return ((value - 32) * 5) / 9 + 273.15;
  return value;
}

function fromKelvin(kelvin: number, id: string): number {
  if (id === 'c') return kelvin - 273.15;
  if (id === 'f') return ((kelvin - 273.15) * 9) / 5 + 32;
  return kelvin;
}

/** "8.05 kilometers", "1 mile", "22.22 degrees Celsius". */
export function speakQuantity(value: number, id: string): string {
  const u = BY_ID.get(id);
  const number = formatNumber(value);
  if (u === undefined) return number;
  return `${number} ${Math.abs(value) === 1 ? u.singular : u.plural}`;
}

/** At most two decimals for ordinary magnitudes, three significant digits for small ones. */
export function formatNumber(value: number): string {
  const magnitude = Math.abs(value);
  const options: Intl.NumberFormatOptions =
    magnitude !== 0 && magnitude < 1 ? { maximumSignificantDigits: 3 } : { maximumFractionDigits: 2 };
  return new Intl.NumberFormat('en-US', options).format(value);
}
