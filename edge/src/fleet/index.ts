export { FleetWorkerLink, type FleetWorkerLinkOptions } from './fleet-link.ts';
export { placementFromEnv } from './placement-from-env.ts';
export { RedisPlacement, type RedisPlacementOptions } from './redis-placement.ts';
export { StaticPlacement } from './static-placement.ts';
export type { WorkerEndpoint, WorkerPlacement } from './worker-placement.ts';
