/** Lowercase, without accents or punctuation, single-spaced: "São Paulo?" -> "sao paulo". */
export function normalizePlace(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * Finds the longest known place name (or alias) in a query, on word boundaries.
 * `places` maps normalized names and aliases to canonical names.
 */
export function findKnownPlace(query: string, places: ReadonlyMap<string, string>): string | null {
  const haystack = ` ${normalizePlace(query)} `;
  let best: { canonical: string; length: number } | null = null;
  for (const [alias, canonical] of places) {
    if (haystack.includes(` ${alias} `) && (best === null || alias.length > best.length)) {
      best = { canonical, length: alias.length };
    }
  }
  return best?.canonical ?? null;
}

const TRAILING_WORDS = /\s+(?:today|tonight|tomorrow|right now|now|at the moment|currently|this week|please)$/i;

/**
 * The place named after the last "in", "for" or "at" in a query ("the weather in Atlantis?" -> "Atlantis"),
 * so that an unknown place can fail with a clear message instead of matching nothing.
 */
export function trailingPlace(query: string): string | null {
  const match = /^.*\b(?:in|for|at)\s+([\p{L}][\p{L} .'’-]{0,60}?)[\s?.!]*$/iu.exec(query.trim());
  if (!match?.[1]) return null;
  let place = match[1].trim();
  for (let previous = ''; previous !== place; ) {
    previous = place;
    place = place.replace(TRAILING_WORDS, '').trim();
  }
  if (place === '' || /^(?:the|a|an|it|there|here)$/i.test(place)) return null;
  return place.replace(/\b\p{Ll}/gu, (letter) => letter.toUpperCase());
}

/** Builds the alias map for findKnownPlace from canonical names and their aliases. */
export function placeIndex(
  entries: Iterable<readonly [canonical: string, aliases: readonly string[]]>,
): Map<string, string> {
  const index = new Map<string, string>();
  for (const [canonical, aliases] of entries) {
    for (const name of [canonical, ...aliases]) index.set(normalizePlace(name), canonical);
  }
  return index;
}
