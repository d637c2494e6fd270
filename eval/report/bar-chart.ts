import { Canvas, type Rgb } from './canvas.ts';

export interface BarSeries {
  name: string;
  color: Rgb;
}

export interface BarGroup {
  label: string;
  /** One value per series; null draws "n/a". */
  values: (number | null)[];
}

export interface BarChart {
  title: string;
  subtitle?: string;
  series: BarSeries[];
  groups: BarGroup[];
  /** The value at the right edge of the plot. */
  max: number;
  format: (value: number) => string;
}

const INK: Rgb = [30, 30, 30];
const GRID: Rgb = [225, 225, 225];
const MUTED: Rgb = [120, 120, 120];

/**
 * A horizontal grouped bar chart as PNG bytes: one row of bars per group (one bar per series),
 * labels on the left, values at the bar ends, a legend under the title.
 *
 * @example
 *   const png = renderBarChart({ title: 'Continuation', series, groups, max: 1, format: (v) => `${Math.round(v * 100)}%` });
 */
export function renderBarChart(chart: BarChart): Uint8Array {
  const s = 2;
  const barH = 16;
  const groupGap = 18;
  const labelW = Math.max(...chart.groups.map((g) => Canvas.textWidth(g.label, s))) + 16;
  const plotW = 520;
  const valueW = 90;
  const top = 30 + (chart.subtitle ? 22 : 0) + 28;
  const groupH = chart.series.length * (barH + 4) + groupGap;
  const width = 20 + labelW + plotW + valueW;
  const height = top + chart.groups.length * groupH + 30;
  const c = new Canvas(width, height);
  c.text(20, 12, chart.title, s, INK);
  if (chart.subtitle) c.text(20, 36, chart.subtitle, 1, MUTED);
  let lx = 20;
  const ly = top - 24;
  for (const series of chart.series) {
    c.fillRect(lx, ly, 14, 14, series.color);
    c.text(lx + 20, ly, series.name, s, INK);
    lx += 20 + Canvas.textWidth(series.name, s) + 24;
  }
  const x0 = 20 + labelW;
  for (let i = 0; i <= 4; i++) {
    const gx = x0 + (plotW * i) / 4;
    c.fillRect(gx, top - 4, 1, chart.groups.length * groupH, GRID);
    c.text(gx, top + chart.groups.length * groupH, chart.format((chart.max * i) / 4), 1, MUTED, 'center');
  }
  chart.groups.forEach((group, gi) => {
    const gy = top + gi * groupH;
    c.text(x0 - 10, gy + (groupH - groupGap - Canvas.textHeight(s)) / 2, group.label, s, INK, 'right');
    chart.series.forEach((series, si) => {
      const y = gy + si * (barH + 4);
      const v = group.values[si];
      if (v === null || v === undefined) {
        c.text(x0 + 4, y + 4, 'n/a', 1, MUTED);
        return;
      }
      const w = Math.max(1, (Math.min(v, chart.max) / chart.max) * plotW);
      c.fillRect(x0, y, w, barH, series.color);
      c.text(x0 + w + 6, y + 1, chart.format(v), s, INK);
    });
  });
  return c.png();
}
