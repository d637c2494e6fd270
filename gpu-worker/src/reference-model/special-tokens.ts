/**
 * The protocol tokens a text-level model port advertises (`capabilities().specialTokens`): the
 * names the session host parses model text with. The reference model and the cascade use exactly
 * these; the tiny ONNX bundle adds its own on top.
 */
export const TEXT_SPECIAL_TOKENS = {
  listen: '<|listen|>',
  speak: '<|speak|>',
  turn_eos: '<|turn_eos|>',
  delegate_open: '<delegate>',
  delegate_close: '</delegate>',
  backend_open: '<backend>',
  backend_close: '</backend>',
} as const;
