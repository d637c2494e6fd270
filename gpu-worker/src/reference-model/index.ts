export { OVERLAP_RULES } from '../perception/overlap-policy.ts';
export {
  SILERO_VAD_MODEL_PATH,
  SileroVad,
  type SileroVadOptions,
  VAD_FRAME_SAMPLES,
  VadStream,
} from '../perception/silero-vad.ts';
export {
  ThreadSessionHandle as ReferenceModelSession,
  ThreadSessionHandle,
} from '../threaded-port/thread-session-handle.ts';
export {
  benchReferenceModel,
  type ReferenceModelBenchOptions,
  type ReferenceModelBenchResult,
} from './bench-reference-model.ts';
export { DialogueSession, type Synthesize, type TranscriptEntry } from './dialogue-session.ts';
export { EspeakTts, type EspeakTtsOptions } from './espeak-tts.ts';
export {
  DEFAULT_PERCEPTION_TICK_MS,
  REFERENCE_MODEL_REVISION,
  type ReferenceModelCalibration,
  type ReferenceModelOptions,
  ReferenceModelPort,
} from './reference-model-port.ts';
export { pcm16ToFloat, resampleFloat, resamplePcm16 } from './resample.ts';
export { encodeWav, parseWav } from './wav.ts';
