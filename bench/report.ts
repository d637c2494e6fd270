/** Prints benchmark figures as aligned tables; `npm run bench` collects them into one report. */
export function table(title: string, rows: Record<string, string | number>[]): string {
  if (rows.length === 0) return `\n## ${title}\n(no rows)\n`;
  const cols = Object.keys(rows[0]!);
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? fmt(v) : (v ?? ''));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => `| ${vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `\n## ${title}`,
    line(cols),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...rows.map((r) => line(cols.map((c) => cell(r[c])))),
  ].join('\n');
}

export function fmt(n: number): string {
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
