export {
  BullmqDelegationConsumer,
  type BullmqDelegationConsumerOptions,
  type DelegationRunLike,
} from './bullmq-delegation-consumer.ts';
export {
  BullmqDelegationProducer,
  type BullmqDelegationProducerOptions,
  type DelegationRecord,
} from './bullmq-delegation-producer.ts';
export { type DelegationJob, DelegationJobSchema, WorkEventSchema } from './delegation-job.ts';
export { DEFAULT_DELEGATION_PREFIX, type DelegationKeys, delegationKeys, jobIdFor } from './delegation-keys.ts';
export { delegationQueueDepth, type QueueDepth } from './queue-depth.ts';
export { WorkEventReader, type WorkEventReaderOptions } from './work-event-reader.ts';
