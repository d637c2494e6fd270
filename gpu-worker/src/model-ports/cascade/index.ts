export { type CascadeConfig, cascadeConfigFromEnv, type EndpointConfig } from './cascade-config.ts';
export { CascadeDialogue, type CascadeDialogueOptions } from './cascade-dialogue.ts';
export { CASCADE_MODEL_REVISION, CascadeModelPort } from './cascade-model-port.ts';
export { CASCADE_SYSTEM_PROMPT, chatRequestMessages } from './cascade-prompt.ts';
export { type CascadeBackends, type ChatMessage, OpenAiEndpoints, RequestAborted } from './openai-endpoints.ts';
export { SentenceSplitter } from './sentence-splitter.ts';
export { sseData } from './sse-data.ts';
