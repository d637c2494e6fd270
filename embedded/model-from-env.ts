import {
  CascadeModelPort,
  DEFAULT_PERCEPTION_TICK_MS,
  OfficialServiceModelPort,
  OnnxBundleModelPort,
  ReferenceModelPort,
} from '@venus/gpu-worker';
import { type ModelPort, resolveSettingAliases, VenusError } from '@venus/protocol';
import { z } from 'zod';

const ModelEnvSchema = z.object({
  VENUS_MODEL: z.enum(['reference', 'cascade', 'venus-service', 'onnx-bundle']).default('reference'),
  VENUS_INFERENCE_THREADS: z.coerce.number().int().positive().default(1),
  VENUS_TTS_THREADS: z.coerce.number().int().positive().default(1),
  /** The worker's session cap; the reference model takes it as its capacity instead of calibrating one. */
  VENUS_MAX_SESSIONS: z.coerce.number().int().positive().optional(),
  VENUS_SERVICE_URL: z.string().url().optional(),
  VENUS_SERVICE_TOKENIZER: z.string().optional(),
  VENUS_SERVICE_MODEL: z.string().optional(),
  VENUS_BUNDLE_DIR: z.string().optional(),
  VENUS_EXECUTION_PROVIDER: z.enum(['cpu', 'cuda']).default('cpu'),
  /** The reference model's perception tick (ms) between chunk steps; 0 = off (overlaps judged at boundaries only). */
  VENUS_PERCEPTION_TICK_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 20 && ms <= 1000), '0 (off) or 20..1000 ms')
    .default(DEFAULT_PERCEPTION_TICK_MS),
});

/**
 * Which model port a GPU worker holds, from the environment (`VENUS_MODEL`):
 * - `reference` (default): the shipped reference model (Silero VAD + rules + eSpeak NG);
 * - `cascade`: transcription + streaming chat + speech over OpenAI-compatible endpoints (VENUS_CASCADE_*);
 * - `venus-service`: the official Realtime-Venus model service (VENUS_SERVICE_URL, VENUS_SERVICE_TOKENIZER);
 * - `onnx-bundle`: an exported ONNX bundle (VENUS_BUNDLE_DIR, VENUS_EXECUTION_PROVIDER cpu|cuda).
 *
 * `env` is the resolved environment a process's settings module returns (older names such as
 * INFERENCE_THREADS are resolved here too, for callers that pass a raw one).
 */
export async function modelFromEnv(raw: Record<string, string | undefined>): Promise<ModelPort> {
  const env = resolveSettingAliases('model', raw);
  const parsed = ModelEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VenusError('invalid_settings', `${String(issue?.path[0])}: ${issue?.message}`);
  }
  const e = parsed.data;
  switch (e.VENUS_MODEL) {
    case 'reference':
      return ReferenceModelPort.create({
        inferenceThreads: e.VENUS_INFERENCE_THREADS,
        ttsThreads: e.VENUS_TTS_THREADS,
        perceptionTickMs: e.VENUS_PERCEPTION_TICK_MS,
        ...(e.VENUS_MAX_SESSIONS === undefined ? {} : { maxSessions: e.VENUS_MAX_SESSIONS }),
      });
    case 'cascade':
      return CascadeModelPort.fromEnv(env);
    case 'venus-service':
      if (!e.VENUS_SERVICE_URL || !e.VENUS_SERVICE_TOKENIZER)
        throw new VenusError(
          'invalid_settings',
          'VENUS_MODEL=venus-service needs VENUS_SERVICE_URL and VENUS_SERVICE_TOKENIZER',
        );
      return new OfficialServiceModelPort({
        baseUrl: e.VENUS_SERVICE_URL,
        tokenizerPath: e.VENUS_SERVICE_TOKENIZER,
        ...(e.VENUS_SERVICE_MODEL ? { model: e.VENUS_SERVICE_MODEL } : {}),
      });
    case 'onnx-bundle':
      if (!e.VENUS_BUNDLE_DIR)
        throw new VenusError('invalid_settings', 'VENUS_MODEL=onnx-bundle needs VENUS_BUNDLE_DIR');
      return OnnxBundleModelPort.create({
        bundleDir: e.VENUS_BUNDLE_DIR,
        threads: e.VENUS_INFERENCE_THREADS,
        executionProvider: e.VENUS_EXECUTION_PROVIDER,
      });
  }
}
