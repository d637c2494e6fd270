import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import { resamplePcm16 } from '../../reference-model/resample.ts';
import { encodeWav, parseWav } from '../../reference-model/wav.ts';
import type { CascadeConfig, EndpointConfig } from './cascade-config.ts';
import { sseData } from './sse-data.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a cascade session needs from the outside world: speech to text, a language model, text to speech. */
export interface CascadeBackends {
  /** Text of a user turn (16 kHz mono PCM16). */
  transcribe(pcm16k: Int16Array, signal: AbortSignal): Promise<string>;
  /** The reply's raw text, delta by delta. */
  chat(messages: readonly ChatMessage[], signal: AbortSignal): AsyncIterable<string>;
  /** 24 kHz mono PCM16 speech of one sentence. */
  speak(text: string, voice: string | undefined, signal: AbortSignal): Promise<Int16Array>;
}

const TranscriptionSchema = z.object({ text: z.string() });
const ChatChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
});
const StreamErrorSchema = z.object({ error: z.object({ message: z.string() }).or(z.string()) });
const ErrorBodySchema = z.object({ error: z.object({ message: z.string() }).or(z.string()) });

/** Thrown when the caller's own signal ended a request: not an endpoint failure. */
export class RequestAborted extends Error {
  override readonly name = 'RequestAborted';
}

/**
 * The three OpenAI-compatible endpoints behind the cascade port: `POST /audio/transcriptions`
 * (multipart, a 16 kHz WAV), `POST /chat/completions` with `stream: true` (server-sent events up
 * to `[DONE]`) and `POST /audio/speech` (asks for 24 kHz `pcm`, accepts WAV at any rate). Works
 * against OpenAI, vLLM, llama.cpp's server, LocalAI, Speaches and the like. Every failure (refused
 * connection, non-2xx answer, malformed body, timeout) is a `model_unavailable` VenusError,
 * retryable unless the server refused the request itself (a 4xx other than 408, 409 or 429).
 *
 * @example
 *   const endpoints = new OpenAiEndpoints(cascadeConfigFromEnv());
 *   for await (const delta of endpoints.chat([{ role: 'user', content: 'hi' }], signal)) process.stdout.write(delta);
 */
export class OpenAiEndpoints implements CascadeBackends {
  constructor(
    private readonly config: CascadeConfig,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async transcribe(pcm16k: Int16Array, signal: AbortSignal): Promise<string> {
    const { transcription } = this.config;
    const form = new FormData();
    form.append('file', new Blob([encodeWav(pcm16k, 16_000)], { type: 'audio/wav' }), 'turn.wav');
    form.append('model', transcription.model);
    form.append('response_format', 'json');
    if (transcription.language) form.append('language', transcription.language);
    const body = await this.request('transcription', transcription, '/audio/transcriptions', form, signal, (r) =>
      r.json(),
    );
    return parseOrFail('transcription', TranscriptionSchema, body).text.trim();
  }

  async *chat(messages: readonly ChatMessage[], signal: AbortSignal): AsyncGenerator<string> {
    const { chat } = this.config;
    const idle = new IdleTimer(this.config.requestTimeoutMs);
    const combined = AbortSignal.any([signal, idle.signal]);
    const payload = {
      model: chat.model,
      messages,
      stream: true,
      ...(chat.temperature !== undefined ? { temperature: chat.temperature } : {}),
      ...(chat.maxTokens !== undefined ? { max_tokens: chat.maxTokens } : {}),
    };
    try {
      const response = await this.send('chat', chat, '/chat/completions', JSON.stringify(payload), combined);
      if (!response.body) throw unavailable('chat', 'the response has no body');
      idle.touch();
      for await (const data of sseData(response.body)) {
        idle.touch();
        if (data === '[DONE]') return;
        const json = parseJson('chat', data);
        const failure = StreamErrorSchema.safeParse(json);
        if (failure.success)
          throw unavailable('chat', `the stream reported an error: ${errorText(failure.data.error)}`);
        const chunk = parseOrFail('chat', ChatChunkSchema, json);
        for (const choice of chunk.choices) if (choice.delta?.content) yield choice.delta.content;
      }
      // Servers end on `[DONE]`; a stream cut off before it is a failed reply.
      throw unavailable('chat', 'the stream ended before [DONE]');
    } catch (err) {
      throw this.classify('chat', err, signal, idle.signal);
    } finally {
      idle.stop();
    }
  }

  async speak(text: string, voice: string | undefined, signal: AbortSignal): Promise<Int16Array> {
    const { speech } = this.config;
    const payload = {
      model: speech.model,
      input: text,
      voice: voice && speech.voices.includes(voice) ? voice : speech.voice,
      response_format: speech.format,
    };
    const bytes = await this.request(
      'speech',
      speech,
      '/audio/speech',
      JSON.stringify(payload),
      signal,
      async (r) => new Uint8Array(await r.arrayBuffer()),
    );
    return toPcm24k(bytes, speech.format);
  }

  /** A request whose whole answer is read within the timeout. */
  private async request<T>(
    stage: string,
    endpoint: EndpointConfig,
    path: string,
    body: FormData | string,
    signal: AbortSignal,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(this.config.requestTimeoutMs);
    try {
      const response = await this.send(stage, endpoint, path, body, AbortSignal.any([signal, timeout]));
      return await read(response);
    } catch (err) {
      throw this.classify(stage, err, signal, timeout);
    }
  }

  private async send(
    stage: string,
    endpoint: EndpointConfig,
    path: string,
    body: FormData | string,
    signal: AbortSignal,
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
    const response = await this.fetchImpl(`${endpoint.baseUrl}${path}`, { method: 'POST', headers, body, signal });
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      const parsed = ErrorBodySchema.safeParse(safeJson(text));
      const detail = parsed.success ? errorText(parsed.data.error) : text.slice(0, 200);
      const refused = response.status >= 400 && response.status < 500 && ![408, 409, 429].includes(response.status);
      throw new VenusError('model_unavailable', `${stage} endpoint answered ${response.status}: ${detail}`, {
        retryable: !refused,
      });
    }
    return response;
  }

  private classify(stage: string, err: unknown, own: AbortSignal, timeout: AbortSignal): Error {
    if (own.aborted) return new RequestAborted(`${stage} request aborted`);
    if (VenusError.isInstance(err)) return err;
    if (timeout.aborted) {
      return new VenusError(
        'model_unavailable',
        `${stage} endpoint timed out after ${this.config.requestTimeoutMs} ms`,
        {
          cause: err,
        },
      );
    }
    return unavailable(stage, err instanceof Error ? (causeText(err) ?? err.message) : String(err), err);
  }
}

/** Aborts when no bytes arrived for `ms`: a stream may be long, but never silent for long. */
class IdleTimer {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.timer = this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(() => this.controller.abort(), this.ms);
    timer.unref();
    return timer;
  }
}

function toPcm24k(bytes: Uint8Array, format: 'pcm' | 'wav'): Int16Array {
  const isWav = bytes.byteLength >= 12 && String.fromCharCode(...bytes.subarray(0, 4)) === 'RIFF';
  if (isWav) {
    try {
      const wav = parseWav(bytes);
      return wav.sampleRateHz === 24_000 ? wav.samples : resamplePcm16(wav.samples, wav.sampleRateHz, 24_000);
    } catch (err) {
      throw unavailable('speech', `unreadable WAV: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }
  if (format === 'wav') throw unavailable('speech', 'asked for WAV, got something else');
  // Raw `pcm` is 24 kHz s16le; copying aligns it whatever the buffer's offset.
  const samples = new Int16Array(Math.floor(bytes.byteLength / 2));
  new Uint8Array(samples.buffer).set(bytes.subarray(0, samples.length * 2));
  return samples;
}

function unavailable(stage: string, detail: string, cause?: unknown): VenusError {
  return new VenusError(
    'model_unavailable',
    `${stage} endpoint: ${detail}`,
    cause === undefined ? undefined : { cause },
  );
}

function parseOrFail<T>(stage: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw unavailable(stage, `unexpected response: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function parseJson(stage: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw unavailable(stage, `malformed JSON in the stream: ${text.slice(0, 80)}`, err);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorText(error: { message: string } | string): string {
  return typeof error === 'string' ? error : error.message;
}

/** fetch reports "fetch failed" and hides the reason (ECONNREFUSED, a reset) in `cause`. */
function causeText(err: Error): string | undefined {
  const cause = err.cause;
  if (cause instanceof Error) return `${err.message}: ${cause.message}`;
  return undefined;
}
