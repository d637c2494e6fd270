export {
  type BundleManifest,
  BundleManifestSchema,
  type LoadedBundle,
  loadBundle,
} from './bundle-manifest.ts';
export type { ExecutionProvider } from './execution-provider.ts';
export { makeTinyBundle, TINY_BUNDLE_DIR, TINY_BUNDLE_REVISION } from './make-tiny-bundle.ts';
export {
  type OnnxBundleCalibration,
  OnnxBundleModelPort,
  type OnnxBundleOptions,
} from './onnx-bundle-model-port.ts';
export { TINY_BACKEND_REPLY, TINY_USER_REPLY } from './tiny-bundle/tiny-model.ts';
