export { type BucketLimit, TokenBucket } from '@venus/protocol';
export { type NodeEdgeServer, type ServeEdgeNodeOptions, serveEdgeNode } from './adapters/node.ts';
export {
  createEdgeApp,
  type EdgeApp,
  type EdgeAppOptions,
  type EdgeEnv,
  REALTIME_PATH,
  type RealtimeAdmission,
} from './app.ts';
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
export { formatApiKey, keyPrefix, parseApiKey } from './auth/api-key-format.ts';
export { ApiKeys, type AuthFailureReason, type IssuedKey, type StaticKey, type Verified } from './auth/api-keys.ts';
export { authenticate, requireScope } from './auth/auth-middleware.ts';
export { type ClientTokenClaims, ClientTokens } from './auth/client-token.ts';
export { DEFAULT_TENANT, EdgeAuth, type EdgeAuthOptions } from './auth/edge-auth.ts';
export { edgeAuthOptionsFromEnv } from './auth/edge-auth-from-env.ts';
export { InMemoryKeyStore } from './auth/in-memory-key-store.ts';
export type { ApiKeyRecord, KeyStore } from './auth/key-store.ts';
export { KeyedHash } from './auth/keyed-hash.ts';
export type { Principal, SessionSettings } from './auth/principal.ts';
export { RedisKeyStore, type RedisKeyStoreOptions } from './auth/redis-key-store.ts';
export { SCOPES, type Scope, SERVICE_SCOPES } from './auth/scopes.ts';
export {
  apiError,
  createFunctionsApi,
  FUNCTIONS_PATH,
  type FunctionsApiOptions,
  TENANT_HEADER,
} from './functions-api/index.ts';
export { type Clock, systemClock } from './realtime/clock.ts';
export { PlayoutEstimator, type PlayoutEstimatorOptions } from './realtime/playout-estimator.ts';
export { RealtimeConnection, type RealtimeConnectionOptions } from './realtime/realtime-connection.ts';
export type { RealtimeTransport } from './realtime/realtime-transport.ts';
export { SessionListeners } from './relay/session-listeners.ts';
export { FleetQuotas, type FleetQuotasOptions } from './tenancy/fleet-quotas.ts';
export { RedisUsageMeter, type RedisUsageMeterOptions } from './tenancy/redis-usage-meter.ts';
export type { AudioAdmission, SessionHooks } from './tenancy/session-hooks.ts';
export { SessionMetering } from './tenancy/session-metering.ts';
export { createTenancy, type Tenancy, type TenancyOptions } from './tenancy/tenancy.ts';
export { closeTenancy, tenancyFromEnv } from './tenancy/tenancy-from-env.ts';
export { type LimitsConfig, limitsFromEnv, type TenantLimits } from './tenancy/tenant-limits.ts';
export { TenantQuotas } from './tenancy/tenant-quotas.ts';
export { InMemoryUsageMeter, type UsageCounters, type UsageMeter, type UsageReport } from './tenancy/usage-meter.ts';
export { type DevCertificate, devCertificate } from './tls/dev-certificate.ts';
export { type SelfSignedOptions, selfSignedCertificate } from './tls/self-signed-certificate.ts';
export { type TlsOptions, tlsFromEnv } from './tls/tls-options.ts';
