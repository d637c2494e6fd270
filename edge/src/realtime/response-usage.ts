/**
 * `usage` for `response.done`, in OpenAI's shape. The runtime's model ports report no token counts,
 * so tokens are estimates from what the edge saw: audio at OpenAI's documented realtime rates (user
 * audio 1 token per 100 ms, assistant audio 1 token per 50 ms) and text at about 4 characters a
 * token. Input is what the user sent since the previous response began (this turn's new input),
 * not the whole context OpenAI counts. The measured audio seconds go beside it in `response.venus`.
 */
export interface UsageCounts {
  audioMs: number;
  textChars: number;
}

const USER_AUDIO_MS_PER_TOKEN = 100;
const ASSISTANT_AUDIO_MS_PER_TOKEN = 50;
const CHARS_PER_TOKEN = 4;

export function responseUsage(input: UsageCounts, output: UsageCounts) {
  const inputAudio = Math.ceil(input.audioMs / USER_AUDIO_MS_PER_TOKEN);
  const inputText = Math.ceil(input.textChars / CHARS_PER_TOKEN);
  const outputAudio = Math.ceil(output.audioMs / ASSISTANT_AUDIO_MS_PER_TOKEN);
  const outputText = Math.ceil(output.textChars / CHARS_PER_TOKEN);
  const inputTokens = inputAudio + inputText;
  const outputTokens = outputAudio + outputText;
  return {
    usage: {
      total_tokens: inputTokens + outputTokens,
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      input_token_details: {
        text_tokens: inputText,
        audio_tokens: inputAudio,
        image_tokens: 0,
        cached_tokens: 0,
        cached_tokens_details: { text_tokens: 0, audio_tokens: 0, image_tokens: 0 },
      },
      output_token_details: { text_tokens: outputText, audio_tokens: outputAudio },
    },
    venus: {
      usage_estimated: true,
      input_audio_seconds: input.audioMs / 1000,
      output_audio_seconds: output.audioMs / 1000,
    },
  };
}

/** What the user sent towards the next response: counted as it is relayed, taken when a response begins. */
export class InputUsage {
  #counts: UsageCounts = { audioMs: 0, textChars: 0 };

  audio(ms: number): void {
    this.#counts.audioMs += ms;
  }

  text(chars: number): void {
    this.#counts.textChars += chars;
  }

  take(): UsageCounts {
    const counts = this.#counts;
    this.#counts = { audioMs: 0, textChars: 0 };
    return counts;
  }
}
