import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { REPO_ROOT } from './support/child-lines.ts';

export interface MemoryLoadOptions {
  /** Short sessions in all, run `wave` at a time. */
  sessions: number;
  wave: number;
  /** Audio each short session streams. */
  sessionAudioS: number;
  /** Audio time per wall time (4 = four times real time). */
  speed: number;
  /** VENUS_TIMELINE_RETENTION and VENUS_MEDIA_RETENTION of the runtime under test. */
  retentionMs: number;
  /** Audio minutes of the one long session. */
  longSessionMin: number;
}

export interface MemoryLoadResult {
  baselineMb: number;
  waves: { ended: number; rssMb: number; atS: number }[];
  /** RSS once every session ended and the retention passed. */
  settledMb: number;
  /** (max − min) / min of RSS at the ends of the waves after the retention window (same load each), %. */
  wavesSpreadPct: number;
  /** RSS growth per ended session after the retention window: (last wave − first wave after it) / sessions between. */
  growthPerSessionKb: number;
  /** Peak RSS over the baseline per concurrent session of a wave. */
  peakPerLiveSessionKb: number;
  failedSessions: number;
  long: { audioMin: number; rssMb: number }[];
  /** Slope of RSS over audio minutes after the first two (the media window is full by then). */
  longMbPerAudioMin: number;
  longSpreadPct: number;
}

/** 100 ms of 24 kHz pcm16 (quiet noise: the microphone of a room), as an append event. */
const FRAME_MS = 100;
const APPEND = (() => {
  const pcm = new Int16Array(2400);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round((Math.random() - 0.5) * 60);
  return JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.buffer).toString('base64') });
})();
const REQUESTS = ["What's the weather in Paris?", 'What time is it in Tokyo?', 'What is 12 times 7?'];

/**
 * Memory of a real `npm start`: the runtime runs as a child process (the start script's own
 * command, so its pid is the runtime's) with a short retention, and its RSS is read from
 * /proc/<pid>/status (VmRSS). Clients in this process stream microphone audio through the public
 * WebSocket at `speed` × real time and type one request per session so the assistant speaks (both
 * media tracks, delegations). First `sessions` short sessions in waves, RSS read after each wave;
 * then one long session, RSS read every audio minute.
 *
 * @example
 *   const r = await runMemoryLoad({ sessions: 500, wave: 25, sessionAudioS: 20, speed: 4, retentionMs: 10_000, longSessionMin: 30 });
 */
export async function runMemoryLoad(o: MemoryLoadOptions): Promise<MemoryLoadResult> {
  const runtime = await startRuntime(o.retentionMs, o.speed);
  const rssMb = () => vmRssMb(runtime.child.pid!);
  try {
    // Warm-up: code loading and the model's threads are not what is measured.
    await Promise.all(Array.from({ length: 2 }, (_, i) => runSession(runtime.url, 3, o.speed, REQUESTS[i % 3]!)));
    await sleep(2000);
    const baselineMb = rssMb();
    const started = performance.now();
    const waves: MemoryLoadResult['waves'] = [];
    let failed = 0;
    let peakMb = baselineMb;
    for (let ended = 0; ended < o.sessions; ) {
      const n = Math.min(o.wave, o.sessions - ended);
      const sampler = setInterval(() => {
        peakMb = Math.max(peakMb, rssMb());
      }, 500);
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          runSession(runtime.url, o.sessionAudioS, o.speed, REQUESTS[(ended + i) % REQUESTS.length]!),
        ),
      );
      clearInterval(sampler);
      failed += results.filter((ok) => !ok).length;
      ended += n;
      waves.push({ ended, rssMb: rssMb(), atS: (performance.now() - started) / 1000 });
      process.stderr.write(`memory: ${ended}/${o.sessions} sessions ended, RSS ${waves.at(-1)!.rssMb.toFixed(0)} MB\n`);
    }
    // The retention passes with nothing live; the stores sweep on their timers.
    await sleep(o.retentionMs + 11_000);
    const settledMb = rssMb();
    const firstEndS = waves[0]?.atS ?? 0;
    const afterWindow = waves.filter((w) => w.atS >= firstEndS + o.retentionMs / 1000);
    const steady = afterWindow.length > 0 ? afterWindow : waves.slice(-1);
    const first = steady[0]!;
    const last = steady.at(-1)!;

    const long = await runLongSession(runtime.url, o.longSessionMin, o.speed, rssMb);
    const tail = long.filter((s) => s.audioMin >= 2);
    return {
      baselineMb,
      waves,
      settledMb,
      wavesSpreadPct: spreadPct(steady.map((w) => w.rssMb)),
      growthPerSessionKb:
        last.ended > first.ended ? ((last.rssMb - first.rssMb) * 1024) / (last.ended - first.ended) : 0,
      peakPerLiveSessionKb: ((peakMb - baselineMb) * 1024) / o.wave,
      failedSessions: failed,
      long,
      longMbPerAudioMin: slope(tail.map((s) => [s.audioMin, s.rssMb])),
      longSpreadPct: spreadPct(tail.map((s) => s.rssMb)),
    };
  } finally {
    runtime.child.kill('SIGTERM');
    await Promise.race([new Promise((r) => runtime.child.once('exit', r)), sleep(10_000)]);
    runtime.child.kill('SIGKILL');
  }
}

async function startRuntime(retentionMs: number, speed: number): Promise<{ child: ChildProcess; url: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VENUS_PORT: '0',
    PORT: '0',
    VENUS_TIMELINE_RETENTION: `${retentionMs}ms`,
    VENUS_MEDIA_RETENTION: `${retentionMs}ms`,
    VENUS_LOG_LEVEL: 'warn',
    // The load streams faster than real time on purpose: lift the per-session input budget above it.
    VENUS_INPUT_AUDIO_RATE: String(speed + 1),
  };
  // An open, in-memory runtime: the embedded default as `npm start` runs it.
  for (const name of ['REDIS_URL', 'VENUS_REDIS_URL', 'VENUS_API_KEYS', 'VENUS_ADMIN_KEY']) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'embedded/start.ts'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('npm start did not report ready in 120 s')), 120_000);
    lines.on('line', (line) => {
      const match = /realtime\s+(ws:\/\/\S+)\/v1\/realtime/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready`)));
  });
  return { child, url };
}

/** One client session: greets, types a request, streams `audioS` of microphone audio, closes. */
async function runSession(url: string, audioS: number, speed: number, request: string): Promise<boolean> {
  const socket = new WebSocket(`${url}/v1/realtime`, { perMessageDeflate: false });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('message', () => resolve());
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed before session.created')));
    });
    socket.on('error', () => undefined);
    socket.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime' } }));
    socket.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: request }] },
      }),
    );
    await stream(socket, (audioS * 1000) / FRAME_MS, speed);
    return socket.readyState === WebSocket.OPEN;
  } catch {
    return false;
  } finally {
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.close();
    await Promise.race([closed, sleep(5000)]);
  }
}

/** Sends `frames` appends on a drift-free schedule at `speed` × real time. */
async function stream(socket: WebSocket, frames: number, speed: number, onFrame?: (n: number) => Promise<void>) {
  const periodMs = FRAME_MS / speed;
  const t0 = performance.now();
  for (let n = 0; n < frames && socket.readyState === WebSocket.OPEN; n++) {
    socket.send(APPEND);
    await onFrame?.(n + 1);
    const wait = t0 + (n + 1) * periodMs - performance.now();
    if (wait > 0) await sleep(wait);
  }
}

async function runLongSession(
  url: string,
  minutes: number,
  speed: number,
  rssMb: () => number,
): Promise<MemoryLoadResult['long']> {
  const socket = new WebSocket(`${url}/v1/realtime`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('message', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime' } }));
  const samples: MemoryLoadResult['long'] = [{ audioMin: 0, rssMb: rssMb() }];
  const framesPerMin = 60_000 / FRAME_MS;
  await stream(socket, minutes * framesPerMin, speed, async (n) => {
    // A request every half audio minute keeps the assistant talking over the whole session.
    if (n % (framesPerMin / 2) === 1) {
      const text = REQUESTS[Math.floor(n / (framesPerMin / 2)) % REQUESTS.length]!;
      socket.send(
        JSON.stringify({
          type: 'conversation.item.create',
          item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
        }),
      );
    }
    if (n % framesPerMin === 0) {
      samples.push({ audioMin: n / framesPerMin, rssMb: rssMb() });
      process.stderr.write(
        `memory: long session at ${n / framesPerMin} audio min, RSS ${samples.at(-1)!.rssMb.toFixed(0)} MB\n`,
      );
    }
  });
  socket.close();
  return samples;
}

function vmRssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

function spreadPct(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const min = Math.min(...values);
  return ((Math.max(...values) - min) / min) * 100;
}

/** Least-squares slope of y over x. */
function slope(points: readonly (readonly [number, number])[]): number {
  if (points.length < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / points.length;
  const my = points.reduce((s, [, y]) => s + y, 0) / points.length;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}
