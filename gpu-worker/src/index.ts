export * from './fleet/index.ts';
export * from './media/index.ts';
export * from './model-ports/index.ts';
export * from './perception/pocketsphinx/index.ts';
export * from './reference-model/index.ts';
export * from './relay/index.ts';
export * from './session-host/index.ts';
export * from './timeline/index.ts';
