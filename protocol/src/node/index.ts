// Node-only helpers: kept off the main entry so the Workers build never loads node: modules.

export { installProcessErrorHooks, settingsOrExit } from './process-errors.ts';
export { holdWritesForThisTurn } from './turn-writes.ts';
