import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Canvas } from './canvas.ts';
import { crc32, encodePng } from './png.ts';

function chunks(png: Uint8Array): { type: string; data: Uint8Array; crcOk: boolean }[] {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out: { type: string; data: Uint8Array; crcOk: boolean }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    out.push({ type, data, crcOk: view.getUint32(at + 8 + length) === crc32(png, at + 4, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

describe('encodePng', () => {
  it('writes a valid RGBA PNG whose pixels decode back', () => {
    const rgba = Uint8Array.from([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 10, 20, 30, 40]);
    const png = encodePng(2, 2, rgba);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const parts = chunks(png);
    expect(parts.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(parts.every((c) => c.crcOk)).toBe(true);
    const ihdr = new DataView(parts[0]!.data.buffer, parts[0]!.data.byteOffset);
    expect([ihdr.getUint32(0), ihdr.getUint32(4), parts[0]!.data[8], parts[0]!.data[9]]).toEqual([2, 2, 8, 6]);
    const raw = inflateSync(parts[1]!.data);
    expect([...raw.subarray(1, 9)]).toEqual([...rgba.subarray(0, 8)]);
    expect([...raw.subarray(10, 18)]).toEqual([...rgba.subarray(8, 16)]);
  });

  it('rejects a pixel buffer of the wrong size', () => {
    expect(() => encodePng(2, 2, new Uint8Array(3))).toThrow();
  });

  it('crc32 matches the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });
});

describe('Canvas', () => {
  it('draws text as ink inside its measured box', () => {
    const c = new Canvas(40, 20);
    c.text(1, 1, 'A1', 2, [0, 0, 0]);
    let inked = 0;
    for (let y = 0; y < 20; y++) {
      for (let x = 0; x < 40; x++) {
        if (c.pixels[(y * 40 + x) * 4] === 0) {
          inked += 1;
          expect(x).toBeLessThan(1 + Canvas.textWidth('A1', 2));
          expect(y).toBeLessThan(1 + Canvas.textHeight(2));
        }
      }
    }
    expect(inked).toBeGreaterThan(20);
  });
});
