import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from './font-5x7.ts';
import { encodePng } from './png.ts';

export type Rgb = readonly [number, number, number];

/**
 * A small RGBA raster for charts: filled rectangles and 5×7 bitmap text at integer scales.
 *
 * @example
 *   const c = new Canvas(400, 200);
 *   c.fillRect(10, 10, 100, 20, [40, 110, 200]);
 *   c.text(10, 40, 'Respond rate', 2, [0, 0, 0]);
 *   writeFileSync('x.png', c.png());
 */
export class Canvas {
  readonly pixels: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb = [255, 255, 255],
  ) {
    this.pixels = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      this.pixels.set([background[0], background[1], background[2], 255], i * 4);
    }
  }

  fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.width, Math.round(x + w));
    const y1 = Math.min(this.height, Math.round(y + h));
    for (let yy = y0; yy < y1; yy++) {
      for (let xx = x0; xx < x1; xx++) this.pixels.set([color[0], color[1], color[2], 255], (yy * this.width + xx) * 4);
    }
  }

  static textWidth(text: string, scale: number): number {
    return text.length === 0 ? 0 : (text.length * (GLYPH_WIDTH + 1) - 1) * scale;
  }

  static textHeight(scale: number): number {
    return GLYPH_HEIGHT * scale;
  }

  /** Draws `text` with its top-left corner at (x, y); `align: 'right'` puts its right edge at x. */
  text(
    x: number,
    y: number,
    text: string,
    scale: number,
    color: Rgb,
    align: 'left' | 'right' | 'center' = 'left',
  ): void {
    const width = Canvas.textWidth(text, scale);
    let left = align === 'right' ? x - width : align === 'center' ? x - width / 2 : x;
    left = Math.round(left);
    for (const ch of text) {
      const rows = glyph(ch);
      rows.forEach((row, r) => {
        row.forEach((ink, c) => {
          if (ink) this.fillRect(left + c * scale, y + r * scale, scale, scale, color);
        });
      });
      left += (GLYPH_WIDTH + 1) * scale;
    }
  }

  png(): Uint8Array {
    return encodePng(this.width, this.height, this.pixels);
  }
}
