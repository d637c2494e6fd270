export {
  type BundleManifest,
  BundleManifestSchema,
  type LoadedBundle,
  loadBundle,
} from './bundle-manifest.ts';
export type { ExecutionProvider } from './execution-provider.ts';
export {
  type OnnxBundleCalibration,
  OnnxBundleModelPort,
  type OnnxBundleOptions,
} from './onnx-bundle-model-port.ts';
