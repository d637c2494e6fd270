export {
  type BenchCapacityOptions,
  benchCapacity,
  type CapacityResult,
  type CapacityRow,
} from './bench-capacity.ts';
export * from './cascade/index.ts';
export {
  OfficialServiceModelPort,
  type OfficialServiceOptions,
} from './official-service/official-service-model-port.ts';
export { OfficialServiceSession } from './official-service/official-service-session.ts';
export { CheckpointTokenizer, type DecodedDelta, TokenStreamDecoder } from './official-service/token-decoder.ts';
export { PROTOCOL_VERSION as OFFICIAL_SERVICE_PROTOCOL_VERSION } from './official-service/wire-schemas.ts';
export * from './onnx-bundle/index.ts';
