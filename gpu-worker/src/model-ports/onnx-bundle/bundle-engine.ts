import type { OutputStep, StepRequest } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { MicroBatcher } from '../../perception/micro-batcher.ts';
import { CheckpointTokenizer } from '../official-service/token-decoder.ts';
import { BundleDialogue, type InputSegment, type RoleIds } from './bundle-dialogue.ts';
import type { LoadedBundle } from './bundle-manifest.ts';
import { AudioEncoder } from './components/audio-encoder.ts';
import { argmax, CausalDecoder, type DecodeRow } from './components/causal-decoder.ts';
import { SpeechHead } from './components/speech-head.ts';
import { TokenEmbedder } from './components/token-embedder.ts';
import type { ProviderOptions } from './execution-provider.ts';

interface StepJob {
  dialogue: BundleDialogue;
  request: StepRequest;
}

/**
 * A bundle loaded in one worker thread: its components, and the batching of session steps (a
 * MicroBatcher: steps that arrive while a batch runs form the next batch). Each batch encodes every session's audio in
 * one encoder run, embeds all tokens in one run, decodes all sessions together (split by the
 * decoder's `maxBatch`) greedily up to `maxTokensPerChunk` tokens each, and synthesises all spoken
 * tokens in one speech-head run.
 *
 * @example
 *   const engine = await BundleEngine.load(bundle, { executionProvider: 'cpu' });
 *   const dialogue = engine.openDialogue('s1', 0);
 *   dialogue.appendText(1, 'hello');
 *   const step = await engine.step(dialogue, { chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 */
export class BundleEngine {
  private readonly batcher = new MicroBatcher<StepJob, OutputStep>((jobs) => this.runBatch(jobs));

  private constructor(
    readonly bundle: LoadedBundle,
    private readonly tokenizer: CheckpointTokenizer,
    private readonly roles: RoleIds,
    private readonly embedder: TokenEmbedder,
    private readonly decoder: CausalDecoder,
    private readonly audio: AudioEncoder | null,
    private readonly speech: SpeechHead | null,
  ) {}

  static async load(bundle: LoadedBundle, provider: ProviderOptions): Promise<BundleEngine> {
    const { manifest, paths } = bundle;
    const tokenizer = await CheckpointTokenizer.load(paths.tokenizer);
    const id = (name: string, token: string) => {
      const found = tokenizer.idOf(token);
      if (found === undefined)
        throw new VenusError('model_unavailable', `the bundle tokenizer has no ${name} token ${token}`, {
          retryable: false,
        });
      return found;
    };
    const st = manifest.specialTokens;
    const roles: RoleIds = {
      listen: id('listen', st.listen),
      speak: id('speak', st.speak),
      turnEos: id('turn_eos', st.turn_eos),
      delegateOpen: id('delegate_open', st.delegate_open),
      delegateClose: id('delegate_close', st.delegate_close),
      special: new Set(Object.entries(st).map(([name, token]) => id(name, token))),
    };
    const [embedder, decoder, audio, speech] = await Promise.all([
      TokenEmbedder.open(paths.embedTokens, manifest, provider),
      CausalDecoder.open(paths.decoder, manifest, provider),
      paths.audioEncoder ? AudioEncoder.open(paths.audioEncoder, manifest, provider) : null,
      paths.speechHead ? SpeechHead.open(paths.speechHead, manifest, provider) : null,
    ]);
    return new BundleEngine(bundle, tokenizer, roles, embedder, decoder, audio, speech);
  }

  openDialogue(sessionId: string, incarnation: number): BundleDialogue {
    return new BundleDialogue({
      sessionId,
      incarnation,
      manifest: this.bundle.manifest,
      tokenizer: this.tokenizer,
      roles: this.roles,
      cache: this.decoder.createCache(),
      frameSamples: this.audio?.frameSamples ?? 1,
    });
  }

  get audioInput(): boolean {
    return this.audio !== null;
  }

  /** Steps one session; joins the next batch. */
  step(dialogue: BundleDialogue, request: StepRequest): Promise<OutputStep> {
    return this.batcher.submit({ dialogue, request });
  }

  async release(): Promise<void> {
    await Promise.all([this.embedder.release(), this.decoder.release(), this.audio?.release(), this.speech?.release()]);
  }

  private async runBatch(jobs: StepJob[]): Promise<Array<PromiseSettledResult<OutputStep>>> {
    const hidden = this.bundle.manifest.hiddenSize;
    const segments = jobs.map((j) => {
      j.dialogue.beginStep(j.request);
      return j.dialogue.takeInputs(j.request.inputSeqCutoff);
    });
    const { audioEmbeds, speechByJob } = await this.encodeAudio(segments);
    const tokenIds = segments.flatMap((segs) => segs.flatMap((s) => (s.kind === 'tokens' ? s.ids : [])));
    const tokenEmbeds = await this.embedder.embed(tokenIds);
    let tokenAt = 0;
    let audioAt = 0;
    const rows: DecodeRow[] = segments.map((segs, i) => {
      const count = segs.reduce((n, s) => n + (s.kind === 'tokens' ? s.ids.length : s.count), 0);
      const embeds = new Float32Array(count * hidden);
      let at = 0;
      for (const s of segs) {
        const n = s.kind === 'tokens' ? s.ids.length : s.count;
        const source =
          s.kind === 'tokens'
            ? tokenEmbeds.subarray(tokenAt, tokenAt + n * hidden)
            : audioEmbeds.subarray(audioAt, audioAt + n * hidden);
        if (s.kind === 'tokens') tokenAt += n * hidden;
        else audioAt += n * hidden;
        embeds.set(source, at);
        at += n * hidden;
      }
      return { cache: jobs[i]!.dialogue.cache, embeds, count };
    });
    for (let start = 0; start < rows.length; start += this.decoder.maxBatch)
      await this.decode(
        jobs.slice(start, start + this.decoder.maxBatch),
        rows.slice(start, start + this.decoder.maxBatch),
      );
    const spoken = jobs.map((j) => j.dialogue.spokenTokens);
    const pcm = this.speech ? await this.speech.synthesize(spoken.flat()) : new Float32Array(0);
    const per = this.speech?.samplesPerToken ?? 0;
    let pcmAt = 0;
    return jobs.map((j, i) => {
      const n = spoken[i]!.length * per;
      const speech = n > 0 ? pcm.subarray(pcmAt, pcmAt + n) : null;
      pcmAt += n;
      try {
        return { status: 'fulfilled', value: j.dialogue.finishStep(speech, speechByJob[i] ?? null) };
      } catch (reason) {
        return { status: 'rejected', reason };
      }
    });
  }

  private async encodeAudio(
    segments: InputSegment[][],
  ): Promise<{ audioEmbeds: Float32Array; speechByJob: Array<Float32Array | null> }> {
    const total = segments.reduce((n, segs) => n + segs.reduce((m, s) => m + (s.kind === 'audio' ? s.count : 0), 0), 0);
    if (total === 0 || !this.audio) return { audioEmbeds: new Float32Array(0), speechByJob: segments.map(() => null) };
    const buffer = this.audio.frames(total);
    let at = 0;
    for (const segs of segments)
      for (const s of segs)
        if (s.kind === 'audio') {
          buffer.set(s.frames, at);
          at += s.frames.length;
        }
    const { embeds, speech } = await this.audio.encode(total);
    let frame = 0;
    const speechByJob = segments.map((segs) => {
      const n = segs.reduce((m, s) => m + (s.kind === 'audio' ? s.count : 0), 0);
      const p = speech && n > 0 ? speech.subarray(frame, frame + n) : null;
      frame += n;
      return p;
    });
    return { audioEmbeds: embeds, speechByJob };
  }

  /** Greedy decoding of one decoder batch: up to `maxTokensPerChunk` tokens per session. */
  private async decode(jobs: StepJob[], rows: DecodeRow[]): Promise<void> {
    const batch = await this.decoder.begin(rows);
    let tokens = jobs.map((j, i) => {
      const logits = batch.logits(i);
      if (!logits) return null;
      const token = argmax(logits);
      return j.dialogue.absorb(token) ? token : null;
    });
    while (tokens.some((t) => t !== null)) {
      const active = tokens.filter((t): t is number => t !== null);
      const embeds = await this.embedder.embed(active);
      const hidden = this.bundle.manifest.hiddenSize;
      let k = 0;
      await batch.next(tokens.map((t) => (t === null ? null : embeds.subarray(k * hidden, ++k * hidden))));
      tokens = tokens.map((t, i) => {
        if (t === null) return null;
        const next = argmax(batch.logits(i)!);
        return jobs[i]!.dialogue.absorb(next) ? next : null;
      });
    }
    batch.commit();
  }
}
