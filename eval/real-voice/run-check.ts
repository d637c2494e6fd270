import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resamplePcm16 } from '@venus/gpu-worker';
import { speechClip } from '../../test/support/speech-clip.ts';
import { checkOverlap, checkRecognition, checkVad } from './checks.ts';
import {
  ALSA_UTILS,
  alsaRecordings,
  POCKETSPHINX_SOURCE,
  pocketsphinxRecordings,
  type RecordingSource,
} from './recordings.ts';
import { dbText, formatReport, type RealVoiceReport } from './report.ts';

export interface RealVoiceOptions {
  /** The unpacked pocketsphinx source package, or a folder holding it. */
  pocketsphinxSrc?: string;
  /** alsa-utils' sounds folder (its install location by default). */
  alsaDir?: string;
  realTime: boolean;
  /** At most this many recordings per source. */
  limit?: number;
  /** Levels of the assistant's voice under the recording, dB relative to it. Default none (-Infinity: perfect echo cancellation), -30 and -12. */
  assistantDbs?: number[];
  loadAvg: number;
  command: string;
  onProgress?: (line: string) => void;
}

const ASSISTANT_TEXT =
  'Let me check the weather in Paris. It may take a few seconds, so bear with me; meanwhile, feel free to ask me something else.';

/** Finds the recordings, runs the three checks, and formats the report. */
export async function runRealVoiceCheck(o: RealVoiceOptions): Promise<{ report: RealVoiceReport; markdown: string }> {
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const alsa = alsaRecordings(o.alsaDir).slice(0, limit);
  const sphinx = pocketsphinxRecordings(o.pocketsphinxSrc).slice(0, limit);
  const recordings = [...alsa, ...sphinx];
  const sources: RecordingSource[] = [];
  const missing: RecordingSource[] = [];
  for (const [source, list] of [
    [ALSA_UTILS, alsa],
    [POCKETSPHINX_SOURCE, sphinx],
  ] as const)
    (list.length > 0 ? sources : missing).push(source);
  const assistantDbs = o.assistantDbs ?? [Number.NEGATIVE_INFINITY, -30, -12];
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-real-voice-'));
  let assistant24k: Int16Array;
  try {
    assistant24k = resamplePcm16(speechClip(dir, ASSISTANT_TEXT), 16_000, 24_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  o.onProgress?.(`recogniser on ${recordings.length} recordings`);
  const recognition = recordings.length > 0 ? await checkRecognition(recordings) : [];
  o.onProgress?.('voice activity');
  const vad = recordings.length > 0 ? await checkVad(recordings) : [];
  o.onProgress?.(
    `over the assistant at ${assistantDbs.map(dbText).join(', ')} dB${o.realTime ? ', in real time' : ''}`,
  );
  const overlap =
    recordings.length > 0
      ? await checkOverlap(recordings, vad, {
          assistant24k,
          assistantDbs,
          realTime: o.realTime,
          phrases: recordings.flatMap((r) => (r.text ? [r.text] : [])),
        })
      : [];
  const report: RealVoiceReport = {
    recordings,
    sources,
    missing,
    recognition,
    vad,
    overlap,
    conditions: {
      date: new Date().toISOString().slice(0, 10),
      command: o.command,
      loadAvg: o.loadAvg,
      realTime: o.realTime,
      assistantDbs,
    },
  };
  return { report, markdown: formatReport(report) };
}
