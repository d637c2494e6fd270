/** The parts of the `espeak-ng` npm package (an Emscripten MODULARIZE build) that EspeakTts uses. */
declare module 'espeak-ng' {
  export interface ESpeakNgModule {
    FS: {
      writeFile(path: string, data: string | Uint8Array): void;
      readFile(path: string): Uint8Array;
      /** Open file streams by descriptor (null for closed slots). */
      streams: ReadonlyArray<unknown>;
    };
    _main(argc: number, argv: number): number;
  }

  export interface ESpeakNgOptions {
    arguments?: string[];
    noInitialRun?: boolean;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
    instantiateWasm?: (
      imports: WebAssembly.Imports,
      receiveInstance: (instance: WebAssembly.Instance, module?: WebAssembly.Module) => void,
    ) => Record<string, never>;
  }

  const ESpeakNg: (options?: ESpeakNgOptions) => Promise<ESpeakNgModule>;
  export default ESpeakNg;
}
