export { abortableSleep, raceAbort } from './abortable.ts';
export {
  type BenchDelegationOptions,
  type BenchDelegationResult,
  type BenchTarget,
  type BullmqBenchTargetOptions,
  benchDelegation,
  benchFunctions,
  bullmqBenchTarget,
  inProcessBenchTarget,
} from './bench-delegation.ts';
export { type BuiltinFunctionsOptions, createBuiltinFunctions } from './builtins/builtin-functions.ts';
export { type CalculatorArgs, CalculatorArgsSchema, createCalculator } from './builtins/calculator.ts';
export type { BuiltinOptions } from './builtins/latency.ts';
export {
  createNotes,
  extractNotes,
  type NotesArgs,
  NotesArgsSchema,
  type NotesOptions,
} from './builtins/notes.ts';
export { MemoryNotesStore, type Note, type NotesStore, RedisNotesStore } from './builtins/notes-store.ts';
export { createWeather, type WeatherArgs, WeatherArgsSchema, type WeatherOptions } from './builtins/weather.ts';
export { loadBundledWeatherSample, type WeatherSample, WeatherSampleSchema } from './builtins/weather-sample.ts';
export { createWebFetch, type WebFetchArgs, WebFetchArgsSchema, type WebFetchOptions } from './builtins/web-fetch.ts';
export {
  createWorkStatus,
  describeWorkStatus,
  WORK_STATUS_FUNCTION,
  type WorkStatusArgs,
  WorkStatusArgsSchema,
} from './builtins/work-status.ts';
export {
  createWorldClock,
  type WorldClockArgs,
  WorldClockArgsSchema,
  type WorldClockOptions,
} from './builtins/world-clock.ts';
export {
  BullmqDelegationConsumer,
  type BullmqDelegationConsumerOptions,
  BullmqDelegationProducer,
  type BullmqDelegationProducerOptions,
  DEFAULT_DELEGATION_PREFIX,
  type DelegationJob,
  DelegationJobSchema,
  type DelegationKeys,
  type DelegationRecord,
  type DelegationRunLike,
  delegationKeys,
  delegationQueueDepth,
  jobIdFor,
  type QueueDepth,
  WorkEventReader,
  type WorkEventReaderOptions,
  WorkEventSchema,
} from './bullmq/index.ts';
export {
  DelegationRunner,
  type DelegationRunnerOptions,
  type RunHooks,
  type RunOutcome,
} from './delegation-runner.ts';
export {
  buildEvidence,
  EVIDENCE_LIMITS,
  type Evidence,
  type EvidenceAudioRef,
  type EvidenceLimits,
  type EvidenceLine,
  evidenceTranscript,
  readEvidence,
  type TimelineReader,
} from './evidence.ts';
export {
  describeFunction,
  FUNCTION_NAME_PATTERN,
  type FunctionContext,
  type FunctionDescription,
  type FunctionOutput,
  type VenusFunction,
} from './function-definition.ts';
export { FunctionRegistry } from './function-registry.ts';
export { InProcessExecutor, type InProcessExecutorOptions } from './in-process-executor.ts';
export { LlmPlanner, type LlmPlannerOptions, llmPlannerFromEnv } from './llm-planner.ts';
export { DefaultOralizer, type DefaultOralizerOptions, type OralizeInput, type Oralizer } from './oralizer.ts';
export type { Plan, PlanContext, Planner } from './planner.ts';
export * from './platform/index.ts';
export { type ProgressTickerOptions, startProgressTicker } from './progress-ticker.ts';
export { RedisTimelineReader, type RedisTimelineReaderOptions } from './redis-timeline-reader.ts';
export { RouterPlanner, type RouterPlannerOptions, routerTokens } from './router-planner.ts';
