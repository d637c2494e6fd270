export { OVERLAP_RULES } from './audio-overlap.ts';
export {
  benchReferenceModel,
  type ReferenceModelBenchOptions,
  type ReferenceModelBenchResult,
} from './bench-reference-model.ts';
export { DialogueSession, type Synthesize, type TranscriptEntry } from './dialogue-session.ts';
export { EspeakTts, type EspeakTtsOptions } from './espeak-tts.ts';
export {
  REFERENCE_MODEL_REVISION,
  type ReferenceModelCalibration,
  type ReferenceModelOptions,
  ReferenceModelPort,
} from './reference-model-port.ts';
export { ReferenceModelSession } from './reference-model-session.ts';
export { pcm16ToFloat, resampleFloat, resamplePcm16 } from './resample.ts';
export { SILERO_VAD_MODEL_PATH, SileroVad, type SileroVadOptions, VAD_FRAME_SAMPLES, VadStream } from './silero-vad.ts';
export { encodeWav, parseWav } from './wav.ts';
