export { type NodeEdgeServer, type ServeEdgeNodeOptions, serveEdgeNode } from './adapters/node.ts';
export { createEdgeApp, type EdgeApp, type EdgeAppOptions, type EdgeEnv, REALTIME_PATH } from './app.ts';
export { type CanonicalAudioFormat, canonicalAudioFormat, NATIVE_RATE_HZ } from './audio/audio-format.ts';
export {
  alawToLinear,
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  linearToAlaw,
  linearToMulaw,
  mulawToLinear,
} from './audio/g711.ts';
export { InputAudioConverter } from './audio/input-audio-converter.ts';
export { OutputAudioEncoder } from './audio/output-audio-encoder.ts';
export { StreamingResampler } from './audio/streaming-resampler.ts';
export { isAcceptedKey, presentedApiKey, requireApiKey } from './auth/api-key-auth.ts';
export { type Clock, systemClock } from './realtime/clock.ts';
export { PlayoutEstimator, type PlayoutEstimatorOptions } from './realtime/playout-estimator.ts';
export { RealtimeConnection, type RealtimeConnectionOptions } from './realtime/realtime-connection.ts';
export type { RealtimeTransport } from './realtime/realtime-transport.ts';
