export {
  type AdmissionVerdict,
  type BoundaryState,
  decideAdmission,
  type PendingResult,
  planBoundary,
  requiredSilenceMs,
} from './admission.ts';
export { type DelegateParseEvent, DelegateParser } from './delegate-parser.ts';
export { PlaybackLedger } from './playback-ledger.ts';
export { SessionHost, type SessionHostOptions } from './session-host.ts';
export { SessionRuntime, type SessionRuntimeOptions } from './session-runtime.ts';
export { StepStats } from './step-stats.ts';
export {
  MAX_REWRITTEN_EVENTS,
  MAX_UNWRITTEN_EVENTS,
  TimelineWriter,
  type TimelineWriterOptions,
} from './timeline-writer.ts';
export { type InterruptOutcome, UtteranceHandle } from './utterance-handle.ts';
