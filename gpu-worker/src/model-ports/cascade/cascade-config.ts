import { VenusError } from '@venus/protocol';
import { z } from 'zod';

/** One OpenAI-compatible endpoint: its API root (ending in `/v1`), key and model. */
export interface EndpointConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

export interface CascadeConfig {
  /** `POST {baseUrl}/audio/transcriptions`, multipart with a 16 kHz mono WAV. */
  transcription: EndpointConfig & { language?: string };
  /** `POST {baseUrl}/chat/completions` with `stream: true`. */
  chat: EndpointConfig & { temperature?: number; maxTokens?: number };
  /** `POST {baseUrl}/audio/speech`; `pcm` is 24 kHz s16le, `wav` any PCM16 rate. */
  speech: EndpointConfig & {
    voice: string;
    /** Voices the speech server knows: a session asking for one of these gets it, others get `voice`. */
    voices: string[];
    format: 'pcm' | 'wav';
  };
  /** Limit on a transcription or speech request, and on each wait for the chat stream's next bytes (ms). */
  requestTimeoutMs: number;
  /** Sessions this port admits; the endpoints, not this process, are the bound. */
  maxSessions: number;
  /** Worker threads hosting sessions (VAD, turn-taking, requests). */
  threads: number;
  /** Replaces the built-in system prompt (the delegate protocol must then be explained by it). */
  systemPrompt?: string;
}

const Env = z.object({
  VENUS_CASCADE_BASE_URL: z.url().optional(),
  VENUS_CASCADE_API_KEY: z.string().optional(),
  VENUS_CASCADE_TRANSCRIPTION_URL: z.url().optional(),
  VENUS_CASCADE_TRANSCRIPTION_API_KEY: z.string().optional(),
  VENUS_CASCADE_TRANSCRIPTION_MODEL: z.string().min(1).default('whisper-1'),
  VENUS_CASCADE_TRANSCRIPTION_LANGUAGE: z.string().min(2).optional(),
  VENUS_CASCADE_CHAT_URL: z.url().optional(),
  VENUS_CASCADE_CHAT_API_KEY: z.string().optional(),
  VENUS_CASCADE_CHAT_MODEL: z.string().min(1).default('gpt-4o-mini'),
  VENUS_CASCADE_CHAT_TEMPERATURE: z.coerce.number().min(0).max(2).optional(),
  VENUS_CASCADE_CHAT_MAX_TOKENS: z.coerce.number().int().positive().optional(),
  VENUS_CASCADE_SPEECH_URL: z.url().optional(),
  VENUS_CASCADE_SPEECH_API_KEY: z.string().optional(),
  VENUS_CASCADE_SPEECH_MODEL: z.string().min(1).default('tts-1'),
  VENUS_CASCADE_SPEECH_VOICE: z.string().min(1).default('alloy'),
  VENUS_CASCADE_SPEECH_VOICES: z.string().optional(),
  VENUS_CASCADE_SPEECH_FORMAT: z.enum(['pcm', 'wav']).default('pcm'),
  VENUS_CASCADE_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  VENUS_CASCADE_MAX_SESSIONS: z.coerce.number().int().positive().default(16),
  VENUS_CASCADE_THREADS: z.coerce.number().int().positive().default(1),
  VENUS_CASCADE_SYSTEM_PROMPT: z.string().min(1).optional(),
});

function endpoint(
  stage: string,
  url: string | undefined,
  base: string | undefined,
  key: string | undefined,
  sharedKey: string | undefined,
  model: string,
): EndpointConfig {
  const baseUrl = url ?? base;
  if (!baseUrl) {
    throw new VenusError(
      'invalid_arguments',
      `the cascade port needs VENUS_CASCADE_BASE_URL or VENUS_CASCADE_${stage}_URL (an OpenAI-compatible API root such as https://api.openai.com/v1)`,
    );
  }
  const apiKey = key || sharedKey;
  return { baseUrl: baseUrl.replace(/\/+$/, ''), model, ...(apiKey ? { apiKey } : {}) };
}

/**
 * Reads the cascade port's configuration from the environment: one shared API root and key
 * (`VENUS_CASCADE_BASE_URL`, `VENUS_CASCADE_API_KEY`) with per-stage overrides for transcription,
 * chat and speech, so each stage can point at a different server.
 *
 * @example
 *   const config = cascadeConfigFromEnv({ VENUS_CASCADE_BASE_URL: 'http://localhost:8000/v1', VENUS_CASCADE_CHAT_MODEL: 'qwen3-8b' });
 */
export function cascadeConfigFromEnv(source: Record<string, string | undefined> = process.env): CascadeConfig {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(source).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VenusError('invalid_arguments', `cascade configuration: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const env = parsed.data;
  const base = env.VENUS_CASCADE_BASE_URL;
  const shared = env.VENUS_CASCADE_API_KEY;
  return {
    transcription: {
      ...endpoint(
        'TRANSCRIPTION',
        env.VENUS_CASCADE_TRANSCRIPTION_URL,
        base,
        env.VENUS_CASCADE_TRANSCRIPTION_API_KEY,
        shared,
        env.VENUS_CASCADE_TRANSCRIPTION_MODEL,
      ),
      ...(env.VENUS_CASCADE_TRANSCRIPTION_LANGUAGE ? { language: env.VENUS_CASCADE_TRANSCRIPTION_LANGUAGE } : {}),
    },
    chat: {
      ...endpoint(
        'CHAT',
        env.VENUS_CASCADE_CHAT_URL,
        base,
        env.VENUS_CASCADE_CHAT_API_KEY,
        shared,
        env.VENUS_CASCADE_CHAT_MODEL,
      ),
      ...(env.VENUS_CASCADE_CHAT_TEMPERATURE !== undefined ? { temperature: env.VENUS_CASCADE_CHAT_TEMPERATURE } : {}),
      ...(env.VENUS_CASCADE_CHAT_MAX_TOKENS !== undefined ? { maxTokens: env.VENUS_CASCADE_CHAT_MAX_TOKENS } : {}),
    },
    speech: {
      ...endpoint(
        'SPEECH',
        env.VENUS_CASCADE_SPEECH_URL,
        base,
        env.VENUS_CASCADE_SPEECH_API_KEY,
        shared,
        env.VENUS_CASCADE_SPEECH_MODEL,
      ),
      voice: env.VENUS_CASCADE_SPEECH_VOICE,
      voices: (env.VENUS_CASCADE_SPEECH_VOICES ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
      format: env.VENUS_CASCADE_SPEECH_FORMAT,
    },
    requestTimeoutMs: env.VENUS_CASCADE_TIMEOUT_MS,
    maxSessions: env.VENUS_CASCADE_MAX_SESSIONS,
    threads: env.VENUS_CASCADE_THREADS,
    ...(env.VENUS_CASCADE_SYSTEM_PROMPT ? { systemPrompt: env.VENUS_CASCADE_SYSTEM_PROMPT } : {}),
  };
}
