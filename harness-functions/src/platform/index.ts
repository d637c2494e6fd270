export { extractArguments } from './argument-extraction.ts';
export { CatalogDelegationRunner, type CatalogDelegationRunnerOptions } from './catalog-delegation-runner.ts';
export { catalogFunction, catalogFunctions } from './catalog-functions.ts';
export { FunctionPlatform, type FunctionPlatformOptions } from './function-platform.ts';
export { type FunctionReply, parseReply } from './function-reply.ts';
export {
  HttpFunctionInvoker,
  type HttpInvokeOutcome,
  type HttpInvokeRequest,
  type HttpInvokerOptions,
} from './http/http-function-invoker.ts';
export {
  SIGNATURE_HEADER,
  signVenusRequest,
  TIMESTAMP_HEADER,
  verifyVenusSignature,
} from './http/request-signature.ts';
export { type LocalWorkerRuntime, loadMiniflareRuntime } from './local-worker-runtime.ts';
export { parametersValidator } from './parameters-validator.ts';
export { type ModuleRunRequest, ModuleSandbox } from './sandbox/module-sandbox.ts';
export { SandboxPool, type SandboxPoolOptions } from './sandbox/sandbox-pool.ts';
export { type SandboxJob, type SandboxOutcome, SandboxThread } from './sandbox/sandbox-thread.ts';
export type { FunctionStore, StoredVersion } from './store/function-store.ts';
export { MemoryFunctionStore } from './store/memory-function-store.ts';
export { RedisFunctionStore, type RedisFunctionStoreOptions } from './store/redis-function-store.ts';
export { TenantCatalogRegistry } from './tenant-catalog-registry.ts';
