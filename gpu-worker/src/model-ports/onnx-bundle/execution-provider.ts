import { VenusError } from '@venus/protocol';
import * as ort from 'onnxruntime-node';

/**
 * Where a bundle's ONNX graphs run, chosen once when the port starts.
 *
 * - `cpu`: onnxruntime-node's bundled CPU provider; works everywhere.
 * - `cuda`: NVIDIA GPUs. The npm package ships the CPU build only; on a GPU node install the CUDA
 *   provider libraries next to the native binding once, with CUDA 12 and cuDNN 9 on the machine:
 *
 *       ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node
 *
 *   (or `npm install` with that variable set). The install script downloads
 *   `libonnxruntime_providers_cuda.so` and `libonnxruntime_providers_shared.so` from the
 *   `Microsoft.ML.OnnxRuntime.Gpu.Linux` NuGet package of the same version into
 *   `node_modules/onnxruntime-node/bin/napi-v6/linux/x64/`. Offline nodes copy those two files there
 *   from a machine that has them. Without them, creating a session with `cuda` fails and the port
 *   refuses to start (it never falls back silently: capacity is measured per provider).
 */
export type ExecutionProvider = 'cpu' | 'cuda';

export interface ProviderOptions {
  executionProvider: ExecutionProvider;
  /** Intra-op threads per graph on CPU. Default 1: the port scales by worker threads instead. */
  intraOpThreads?: number;
  /** GPU ordinal for `cuda`. Default 0. */
  deviceId?: number;
}

export function sessionOptions(options: ProviderOptions): ort.InferenceSession.SessionOptions {
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: options.intraOpThreads ?? 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  if (options.executionProvider === 'cuda')
    return { ...base, executionProviders: [{ name: 'cuda', deviceId: options.deviceId ?? 0 }] };
  return { ...base, executionProviders: ['cpu'] };
}

/** Opens one ONNX graph on the chosen provider, with an error that says how to fix a missing CUDA provider. */
export async function openGraph(path: string, options: ProviderOptions): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(path, sessionOptions(options));
  } catch (err) {
    const hint =
      options.executionProvider === 'cuda'
        ? ' (is the CUDA provider installed? ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node)'
        : '';
    throw new VenusError(
      'model_unavailable',
      `cannot open ${path} on ${options.executionProvider}${hint}: ${String(err)}`,
      {
        cause: err,
        retryable: false,
      },
    );
  }
}

/** Reads one named output of a run as float32, or fails with the graph's name in the message. */
export function floatOutput(results: ort.InferenceSession.ReturnType, name: string, graph: string): ort.Tensor {
  const t = results[name];
  if (t?.type !== 'float32')
    throw new VenusError('model_step_failed', `${graph} returned no float32 output named ${name}`);
  return t;
}
