import { DELEGATION_LIMITS } from '@venus/protocol';
import { DEFAULT_DELEGATION_PREFIX, type DelegationKeys, delegationKeys } from './delegation-keys.ts';
import { throttledErrorLog } from './error-log.ts';

/** Options both sides of the delegation queue take, with the same meaning and defaults. */
export interface QueueSideOptions {
  /** Key prefix shared by producers and consumers. Default `venus:`. */
  prefix?: string;
  now?: () => number;
  resultTtlMs?: number;
  /** Redis trouble; the side carries on. Default: a throttled error log. */
  onError?(error: unknown): void;
}

export interface QueueSide {
  readonly keys: DelegationKeys;
  readonly now: () => number;
  readonly resultTtlMs: number;
  readonly onError: (error: unknown) => void;
}

/** The producer's and the consumer's shared settings, defaults filled in one place so they cannot drift. */
export function queueSide(role: 'producer' | 'consumer', options: QueueSideOptions): QueueSide {
  return {
    keys: delegationKeys(options.prefix ?? DEFAULT_DELEGATION_PREFIX),
    now: options.now ?? Date.now,
    resultTtlMs: options.resultTtlMs ?? DELEGATION_LIMITS.resultTtlMs,
    onError: options.onError ?? throttledErrorLog(`delegation ${role}`),
  };
}
