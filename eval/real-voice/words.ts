/** Lower-case words of a transcript (apostrophes kept, everything else a separator). */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9']+/)
    .filter((w) => w !== '');
}

/**
 * Word alignment of a hypothesis against the reference (Levenshtein over words): reference words
 * heard right, and the errors (substitutions, deletions, insertions) as a word error rate counts them.
 */
export function scoreWords(
  reference: string,
  hypothesis: string,
): { right: number; total: number; substitutions: number; deletions: number; insertions: number } {
  const ref = words(reference);
  const hyp = words(hypothesis);
  // d[i][j]: [cost, subs, dels, ins] aligning ref[0..i) with hyp[0..j).
  type Cell = [number, number, number, number];
  const d: Cell[][] = Array.from({ length: ref.length + 1 }, (_, i) =>
    Array.from({ length: hyp.length + 1 }, (_, j): Cell => [i + j, 0, i, j]),
  );
  for (let i = 1; i <= ref.length; i++) {
    for (let j = 1; j <= hyp.length; j++) {
      const same = ref[i - 1] === hyp[j - 1];
      const diag = d[i - 1]![j - 1]!;
      const up = d[i - 1]![j]!;
      const left = d[i]![j - 1]!;
      const options: Cell[] = [
        [diag[0] + (same ? 0 : 1), diag[1] + (same ? 0 : 1), diag[2], diag[3]],
        [up[0] + 1, up[1], up[2] + 1, up[3]],
        [left[0] + 1, left[1], left[2], left[3] + 1],
      ];
      d[i]![j] = options.reduce((a, b) => (b[0] < a[0] ? b : a));
    }
  }
  const [, substitutions, deletions, insertions] = d[ref.length]![hyp.length]!;
  return { right: ref.length - substitutions - deletions, total: ref.length, substitutions, deletions, insertions };
}
