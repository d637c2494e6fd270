/**
 * `npm run eval:real-voice`: the reference model's perception on real human recordings from Debian
 * packages (alsa-utils' speaker-test voice; the pocketsphinx source package's test recordings when
 * unpacked under out/real-voice/), written to eval/real-voice/REPORT.md.
 *
 *   npm run eval:real-voice -- [--pocketsphinx-src DIR] [--fast] [--limit N] [--out FILE]
 *
 * `--fast` steps as fast as the recogniser allows instead of in real time; `--limit N` takes the
 * first N recordings of each source (a smoke run).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runRealVoiceCheck } from './run-check.ts';

const { values } = parseArgs({
  options: {
    'pocketsphinx-src': { type: 'string', default: 'out/real-voice' },
    fast: { type: 'boolean', default: false },
    limit: { type: 'string' },
    out: { type: 'string', default: fileURLToPath(new URL('./REPORT.md', import.meta.url)) },
  },
});

const result = await runRealVoiceCheck({
  pocketsphinxSrc: values['pocketsphinx-src'],
  realTime: !values.fast,
  ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}),
  loadAvg: loadavg()[0] ?? 0,
  command: `npm run eval:real-voice${values.fast ? ' -- --fast' : ''}`,
  onProgress: (line) => process.stderr.write(`real-voice: ${line}\n`),
});
for (const s of result.report.missing)
  process.stderr.write(`real-voice: no recordings from ${s.name}; to include them: ${s.install}\n`);
if (result.report.recordings.length === 0) {
  process.stderr.write('real-voice: no recordings found: install alsa-utils (apt-get install alsa-utils)\n');
  process.exit(2);
}
writeFileSync(values.out, result.markdown);
console.log(result.markdown);
