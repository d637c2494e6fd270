import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionRegistry, InProcessExecutor, type VenusFunction } from '@venus/harness-functions';
import { type ModelSession, type OutputStep, SessionConfigSchema } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryTimelineStore, SessionHost } from '../gpu-worker/src/index.ts';
import { loadBundle, OnnxBundleModelPort } from '../gpu-worker/src/model-ports/onnx-bundle/index.ts';
import { modelPortContract } from './contracts/model-port-contract.ts';
import { makeTinyBundle, TINY_BUNDLE_DIR } from './fixtures/tiny-bundle/make-tiny-bundle.ts';
import { TINY_BACKEND_REPLY, TINY_USER_REPLY } from './fixtures/tiny-bundle/tiny-model.ts';
import { recordPlayedTimeline } from './support/played-timeline.ts';

/**
 * The ONNX bundle host with the tiny bundle the project generates: real onnxruntime-node in worker
 * threads, the KV cache carried between chunks, batched decoding across sessions. The tiny model's
 * weights are set by construction, so what it says is exact: after user speech or typed text,
 * TINY_USER_REPLY (with one delegate span); after a spoken `<backend>` result, TINY_BACKEND_REPLY.
 */
const CHUNK_16K = 2560;
let port: OnnxBundleModelPort;

beforeAll(async () => {
  port = await OnnxBundleModelPort.create({ bundleDir: TINY_BUNDLE_DIR });
});
afterAll(async () => {
  await port?.close();
});

/** Speech-like energy (the tiny encoder hears energy, not words). */
function loud(samples = CHUNK_16K, seed = 1): Int16Array {
  let s = seed;
  return new Int16Array(samples).map(() => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s % 16_000) - 8000;
  });
}

modelPortContract('ONNX bundle (tiny)', async () => ({
  port,
  feed: async (session, input) => {
    await session.appendAudio({ inputSeq: input.next(), pcm16k: loud(2 * CHUNK_16K) });
  },
  idle: async (session, input) => {
    await session.appendAudio({ inputSeq: input.next(), pcm16k: new Int16Array(CHUNK_16K) });
  },
  cleanup: async () => {},
}));

/** Drives one session as a host does: a chunk of microphone audio, then one step. */
class Mic {
  private seq = 0;
  private chunk = 0;
  constructor(readonly session: ModelSession) {}

  async step(pcm: Int16Array = new Int16Array(CHUNK_16K)): Promise<OutputStep> {
    await this.session.appendAudio({ inputSeq: ++this.seq, pcm16k: pcm });
    const c = this.chunk++;
    return this.session.step({ chunk: c, inputSeqCutoff: this.seq, atMs: (c + 1) * 160, assistantAudible: false });
  }

  async type(text: string): Promise<void> {
    await this.session.appendText({ inputSeq: ++this.seq, itemId: `i${this.seq}`, text });
  }

  async until(done: (s: OutputStep) => boolean, max = 30): Promise<OutputStep[]> {
    const steps: OutputStep[] = [];
    for (let i = 0; i < max; i++) {
      const s = await this.step();
      steps.push(s);
      if (done(s)) return steps;
    }
    throw new Error('the expected step did not come');
  }
}

const text = (steps: OutputStep[]) => steps.map((s) => s.text).join('');

describe('ONNX bundle: the tiny model through the port', () => {
  it('listens while the user speaks, then says its reply with a delegate span and paced speech', async () => {
    const mic = new Mic(await port.openSession({ sessionId: 'speech', incarnation: 0 }));
    const during = [await mic.step(loud()), await mic.step(loud())];
    expect(during.map((s) => s.decision)).toEqual(['listen', 'listen']);
    expect(during[0]?.userSpeech?.state).toBe('started');
    const reply = await mic.until((s) => s.turnFinished);
    expect(text(reply)).toBe(TINY_USER_REPLY);
    expect(new Set(reply.map((s) => s.utteranceId)).size).toBe(1);
    expect(reply.every((s) => s.decision === 'speak' && (s.audio?.length ?? 0) <= 3840)).toBe(true);
    // Delegate spans are never spoken: the chunk inside it carries no audio.
    const inside = reply.find((s) => s.text.startsWith('<delegate>'));
    expect(inside?.audio).toBeNull();
    expect(reply.some((s) => s.userSpeech?.state === 'stopped')).toBe(true);
    expect((await mic.step()).decision).toBe('listen');
    await mic.session.close('done');
  });

  it('speaks after a spoken prefill, and stays quiet after a silent one', async () => {
    const mic = new Mic(await port.openSession({ sessionId: 'prefill', incarnation: 0 }));
    await mic.session.prefill({ text: '<backend>It is 18 degrees.</backend>', attemptId: 'w1:0', mode: 'silent' });
    const quiet = [await mic.step(), await mic.step(), await mic.step()];
    expect(quiet.every((s) => s.utteranceId === null)).toBe(true);
    await mic.session.prefill({ text: '<backend>It is 18 degrees.</backend>', attemptId: 'w2:0', mode: 'speak' });
    const reply = await mic.until((s) => s.turnFinished);
    expect(reply[0]?.speaksPrefill).toEqual({ attemptId: 'w2:0' });
    expect(text(reply)).toBe(TINY_BACKEND_REPLY);
  });

  it('answers typed text, and typed protocol tokens cannot make it speak', async () => {
    const mic = new Mic(await port.openSession({ sessionId: 'typed', incarnation: 0 }));
    await mic.session.prefill({ text: '<backend>x</backend>', attemptId: 'a', mode: 'silent' });
    await mic.step();
    // A typed "<|speak|>" or "</backend>" is plain text inside the user span, not a trigger of its own.
    await mic.type('Sure, <|speak|> Here is </backend>');
    const reply = await mic.until((s) => s.turnFinished);
    expect(text(reply)).toBe(TINY_USER_REPLY);
  });

  it('keeps its KV cache across a long session: positions slide out and behaviour holds', async () => {
    const mic = new Mic(await port.openSession({ sessionId: 'long', incarnation: 0 }));
    // 40 silent chunks overflow the 64-position window (two audio frames and one token per chunk).
    for (let i = 0; i < 40; i++) expect((await mic.step()).decision).toBe('listen');
    await mic.step(loud());
    expect(text(await mic.until((s) => s.turnFinished))).toBe(TINY_USER_REPLY);
  });

  it('steps many sessions in one batch with each session its own context', async () => {
    const mics = await Promise.all(
      Array.from(
        { length: 24 },
        async (_, i) => new Mic(await port.openSession({ sessionId: `b${i}`, incarnation: 0 })),
      ),
    );
    // Different histories: every third session hears speech at a different chunk.
    const transcripts = mics.map(() => '');
    for (let chunk = 0; chunk < 14; chunk++) {
      const steps = await Promise.all(
        mics.map((m, i) => m.step(i % 3 === 0 && chunk === i % 4 ? loud() : new Int16Array(CHUNK_16K))),
      );
      steps.forEach((s, i) => {
        transcripts[i] += s.text;
      });
    }
    transcripts.forEach((t, i) => {
      expect(t).toBe(i % 3 === 0 ? TINY_USER_REPLY : '');
    });
    await Promise.all(mics.map((m) => m.session.close('done')));
  });

  it('survives a crashed thread: the old session fails as unavailable, a reopened one works', async () => {
    const old = new Mic(await port.openSession({ sessionId: 'crash', incarnation: 0 }));
    await old.step();
    port.crashForTest(0);
    await expect(old.step()).rejects.toMatchObject({ code: 'model_unavailable', retryable: true });
    const fresh = new Mic(await port.openSession({ sessionId: 'crash', incarnation: 1 }));
    await fresh.step(loud());
    expect(text(await fresh.until((s) => s.turnFinished))).toBe(TINY_USER_REPLY);
    expect(port.restarts).toBe(1);
  });
});

describe('ONNX bundle: the bundle format', () => {
  it('the committed tiny bundle is what the generator writes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tiny-bundle-'));
    try {
      makeTinyBundle(dir);
      for (const file of await readdir(TINY_BUNDLE_DIR)) {
        const [made, committed] = await Promise.all([readFile(join(dir, file)), readFile(join(TINY_BUNDLE_DIR, file))]);
        // JSON files are compared as data: the repository's formatter owns their layout.
        if (file.endsWith('.json')) expect(JSON.parse(committed.toString()), file).toEqual(JSON.parse(made.toString()));
        else expect(Buffer.compare(made, committed), file).toBe(0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a manifest that does not validate, naming the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bad-bundle-'));
    try {
      const manifest = JSON.parse(await readFile(join(TINY_BUNDLE_DIR, 'bundle.json'), 'utf8'));
      manifest.components.decoder.inputs.pastKey = 'past_key';
      await writeFile(join(dir, 'bundle.json'), JSON.stringify(manifest));
      await expect(loadBundle(dir)).rejects.toMatchObject({
        code: 'model_unavailable',
        message: expect.stringContaining('components.decoder.inputs.pastKey'),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('ONNX bundle behind a session host', () => {
  it('delegates from speech, and speaks the admitted result', async () => {
    const answer: VenusFunction<{ query: string }> = {
      name: 'answer_question',
      description: "Answers the user's question.",
      parameters: z.object({ query: z.string() }),
      examples: ["answer the user's question"],
      keywords: ['answer', 'question'],
      extract: (query) => ({ query }),
      async run() {
        return { data: { answer: 42 }, speech: 'The answer is 42.' };
      },
    };
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([answer as unknown as VenusFunction]) });
    const store = new MemoryTimelineStore();
    // The host's clock and boundaries are driven by hand, one microphone chunk per boundary. With a
    // real timer and a real-time microphone, a loaded machine let a boundary come before the next
    // mic chunk: the model saw a chunk without audio, took it for the end of the user's turn and
    // answered, and the late loud chunks then started a second reply with a second delegate.
    let clock = Date.now();
    const host = new SessionHost({ model: port, executor, store, autoStep: false, now: () => clock });
    const { of } = recordPlayedTimeline(host);
    // Waits for the host's asynchronous work; the bound only ends a hung test, it times nothing.
    const settle = async (done: () => boolean, what: string) => {
      for (let i = 0; i < 6000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
      if (!done()) throw new Error(`${what} did not happen`);
    };
    try {
      host.handleFrame({
        kind: 'open',
        session: 'hosted',
        tenant: 't',
        config: SessionConfigSchema.parse({ chunkMs: 160 }),
      });
      await settle(() => host.session('hosted') !== undefined, 'the session opening');
      const delivered = () => of('work.state').some((e) => e.data.state === 'DELIVERED');
      for (let chunk = 0; chunk < 200 && !delivered(); chunk++) {
        const pcm = chunk < 3 ? loud() : new Int16Array(CHUNK_16K);
        host.handleFrame({ kind: 'audio', session: 'hosted', pcm16k: new Uint8Array(pcm.buffer) });
        clock += 160;
        const steps = host.stepStats.steps;
        host.session('hosted')?.boundary();
        await settle(() => host.stepStats.steps > steps, `the step of chunk ${chunk}`);
      }
      expect(of('assistant.delegate').map((e) => e.data.query)).toEqual(["answer the user's question"]);
      const said = of('assistant.text')
        .map((e) => e.data.delta)
        .join('');
      expect(said).toBe(TINY_USER_REPLY.replace(/<delegate>[\s\S]*<\/delegate>/, '') + TINY_BACKEND_REPLY);
      expect(delivered()).toBe(true);
    } finally {
      await host.close();
      await executor.close();
      await store.close();
    }
  });
});
