export { DEMO_CITIES, DEMO_GRAMMAR, DEMO_PHRASES } from './demo-vocabulary.ts';
export { compileGrammar, grammarWithFunctions, type SpokenFunction, wordsOf } from './grammar-from-vocabulary.ts';
export { PocketSphinxRecogniser, type PocketSphinxRecogniserOptions } from './pocketsphinx-recogniser.ts';
export { REJECT_SCORE_PER_FRAME } from './recogniser-protocol.ts';
