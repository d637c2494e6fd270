import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import createWabt from 'wabt';

const WAT = fileURLToPath(new URL('../src/audio/fir-kernel.wat', import.meta.url));
const OUT = fileURLToPath(new URL('../src/audio/fir-kernel-wasm.ts', import.meta.url));

/** Assembles fir-kernel.wat into wasm bytes (SIMD and saturating conversions on). */
export async function assembleFirKernel(): Promise<Uint8Array> {
  const wabt = await createWabt();
  const module = wabt.parseWat('fir-kernel.wat', readFileSync(WAT, 'utf8'), {
    simd: true,
    sat_float_to_int: true,
  });
  try {
    module.validate();
    return new Uint8Array(module.toBinary({ log: false, write_debug_names: false }).buffer);
  } finally {
    module.destroy();
  }
}

/** The TypeScript module that carries the bytes, so every runtime loads them without a file read. */
export function firKernelSource(bytes: Uint8Array): string {
  const base64 = Buffer.from(bytes).toString('base64');
  return [
    '// Generated from fir-kernel.wat by `npm run build:wasm`: do not edit.',
    `export const FIR_KERNEL_WASM_BASE64 =\n  '${base64}';`,
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bytes = await assembleFirKernel();
  writeFileSync(OUT, firKernelSource(bytes));
  process.stdout.write(`wrote ${OUT} (${bytes.length} bytes of wasm)\n`);
}
