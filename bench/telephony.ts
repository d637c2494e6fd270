import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { mulawToLinear } from '../edge/src/audio/g711.ts';
import { freePort } from '../test/support/baresip.ts';
import { BridgeUnderTest } from '../test/support/sip-bridge-process.ts';
import { SipUac } from '../test/support/sip-uac.ts';
import { SIPP_SCENARIOS } from '../test/support/sipp.ts';
import { until } from '../test/support/until.ts';
import { percentile, table } from './report.ts';

export interface TelephonyBenchOptions {
  /** SIPp calls held at once (each streams RTP). */
  calls: number;
  /** New calls per second while ramping. */
  rate: number;
  /** How long each SIPp call is held after its answer (ms). */
  holdMs: number;
  /** Probe calls (our own, one after another) measured while the load is at its peak. */
  probes: number;
}

export interface TelephonyBench {
  calls: number;
  successful: number;
  failed: number;
  /** Most calls the bridge held at once (answered, not ended), from its own log. */
  peakConcurrent: number;
  setupP50Ms: number;
  setupP99Ms: number;
  /** |inter-arrival - 20 ms| of the bridge's RTP to a probe, while the assistant spoke. */
  jitterP50Ms: number;
  jitterP99Ms: number;
  /** From the runtime's interruption decision to the last voiced RTP packet that arrived, per probe. */
  silenceMs: number[];
  bridgeCpuS: number;
}

/**
 * Concurrent phone calls on one SIP bridge process with the embedded runtime (reference model)
 * behind it over the relay: SIPp ramps `calls` calls (bench-call.xml: PCMU, RTP streamed from a
 * spoken request on a loop) and holds them; at the peak, probe calls of our own ask a question
 * (in-dialog MESSAGE), capture the bridge's RTP on a socket we hold (arrival jitter), and barge in
 * with speech while the answer plays: the time from the runtime's interruption decision (its
 * timeline frame, in this process) to the last voiced packet that still arrived is the
 * interruption-to-silence latency. Figures, not checks.
 */
export async function runTelephonyBench(options: TelephonyBenchOptions): Promise<TelephonyBench> {
  const bridge = await BridgeUnderTest.start(
    { routes: [{ number: '*', tenant: 'default' }] },
    { VENUS_SIP_MAX_CALLS: String(options.calls + 50), VENUS_LOG_LEVEL: 'info' },
  );
  const { dir } = bridge;
  try {
    speechFile(dir, 'bench.ulaw', "What's the weather in Paris?", 3);
    speechFile(dir, 'stop.ulaw', 'Stop. Wait, wait.', 1);
    const sipp = runLoad(bridge, options, await freePort());
    const open = () => countLines(bridge.output, '"call answered"') - countLines(bridge.output, '"call ended"');
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, open());
    }, 100);
    await until('the load reached its peak', () => open() >= options.calls || sipp.exited, options.holdMs * 4);
    const jitter: number[] = [];
    const silenceMs: number[] = [];
    for (let i = 0; i < options.probes; i++) {
      const probe = await probeCall(bridge, `probe-${i}`, dir);
      jitter.push(...probe.jitter);
      if (probe.silenceMs !== undefined) silenceMs.push(probe.silenceMs);
    }
    const result = await sipp.done;
    clearInterval(sampler);
    // utime + stime of the bridge process, in clock ticks (100 a second on Linux).
    const stat = readFileSync(`/proc/${bridge.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const cpu = (Number(stat[11]) + Number(stat[12])) / 100;
    return {
      calls: options.calls,
      successful: result.successful,
      failed: result.failed,
      peakConcurrent: peak,
      setupP50Ms: percentile(result.setupMs, 50),
      setupP99Ms: percentile(result.setupMs, 99),
      jitterP50Ms: percentile(jitter, 50),
      jitterP99Ms: percentile(jitter, 99),
      silenceMs,
      bridgeCpuS: cpu,
    };
  } finally {
    await bridge.close();
  }
}

function countLines(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) n += 1;
  return n;
}

/** eSpeak NG says `text`, as raw μ-law 8 kHz (what SIPp's rtp_stream plays), with `padS` of silence after. */
function speechFile(dir: string, name: string, text: string, padS: number): void {
  const wav = path.join(dir, `${name}.wav`);
  const run = (cmd: string, args: string[]) => {
    if (spawnSync(cmd, args).status !== 0) throw new Error(`${cmd} failed`);
  };
  run('espeak-ng', ['-v', 'en-us', '-w', wav, text]);
  run('sox', ['-D', wav, '-r', '8000', '-c', '1', '-t', 'ul', path.join(dir, name), 'pad', '0', String(padS)]);
}

interface LoadRun {
  exited: boolean;
  done: Promise<{ successful: number; failed: number; setupMs: number[] }>;
}

/** SIPp ramping and holding the calls; its screen and RTT (call setup) files are read when it exits. */
function runLoad(bridge: BridgeUnderTest, o: TelephonyBenchOptions, mediaPort: number): LoadRun {
  const run: LoadRun = { exited: false, done: Promise.resolve({ successful: 0, failed: 0, setupMs: [] }) };
  const child = spawn(
    'sipp',
    [
      bridge.target,
      ...['-sf', path.join(SIPP_SCENARIOS, 'bench-call.xml'), '-s', 'load', '-i', '127.0.0.1', '-mi', '127.0.0.1'],
      ...['-mp', String(mediaPort), '-r', String(o.rate), '-l', String(o.calls), '-m', String(o.calls)],
      ...['-d', String(o.holdMs), '-nostdin', '-trace_rtt', '-rtt_freq', '1', '-trace_screen', '-trace_err'],
      ...['-timeout', `${Math.ceil((o.holdMs * 3) / 1000) + 120}s`, '-timeout_error'],
    ],
    { cwd: bridge.dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  run.done = new Promise((resolve) => {
    child.on('exit', () => {
      run.exited = true;
      const files = readdirSync(bridge.dir);
      const screen = files.find((f) => f.endsWith('_screen.log'));
      const rtt = files.find((f) => f.endsWith('_rtt.csv'));
      const text = screen ? readFileSync(path.join(bridge.dir, screen), 'utf8') : '';
      const count = (label: string) =>
        Number(new RegExp(`${label}\\s*\\|\\s*\\d+\\s*\\|\\s*(\\d+)`).exec(text)?.[1] ?? 0);
      const setupMs = rtt
        ? readFileSync(path.join(bridge.dir, rtt), 'utf8')
            .split('\n')
            .slice(1)
            .map((line) => Number(line.split(';')[1]))
            .filter((v) => Number.isFinite(v) && v > 0)
        : [];
      resolve({ successful: count('Successful call'), failed: count('Failed call'), setupMs });
    });
  });
  return run;
}

interface ProbeResult {
  jitter: number[];
  silenceMs?: number;
}

/**
 * One probe call: ask, capture the answer's RTP, barge in with speech once it plays, and time the
 * runtime's decision against the last voiced packet. Waits after the decision are for packets that
 * might still come (figures only).
 */
async function probeCall(bridge: BridgeUnderTest, number: string, dir: string): Promise<ProbeResult> {
  const sip = createSocket('udp4');
  const rtp = createSocket('udp4');
  await new Promise<void>((r) => sip.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
  const arrivals: { at: number; voiced: boolean; marker: boolean }[] = [];
  rtp.on('message', (bytes) => {
    if (bytes.length < 12 || bytes[1]! & 0x7f) return;
    let sum = 0;
    for (let i = 12; i < bytes.length; i++) sum += mulawToLinear(bytes[i]!) ** 2;
    const voiced = Math.sqrt(sum / (bytes.length - 12)) > 300;
    arrivals.push({ at: performance.now(), voiced, marker: (bytes[1]! & 0x80) !== 0 });
  });
  const call = new SipUac(sip, bridge.target, `${number}-${Date.now()}`);
  let decidedAt: number | undefined;
  let session: string | undefined;
  const off = bridge.runtime.host.onFrame((frame) => {
    if (frame.kind !== 'timeline' || frame.session !== session) return;
    const e = frame.event;
    if (e.type === 'assistant.interruption' && e.data.action !== 'continue') decidedAt ??= performance.now();
  });
  try {
    await call.invite(number, rtp.address().port);
    session = bridge.sessionsFor(number).at(-1);
    await call.message("What's the weather in Paris?");
    await until('the answer plays', () => arrivals.filter((a) => a.voiced).length >= 25, 120_000);
    // Barge in: speech on the caller's line, paced at 20 ms, until the runtime decides.
    const stop = readFileSync(path.join(dir, 'stop.ulaw'));
    let at = 0;
    let seq = 1;
    const timer = setInterval(() => {
      const frame = stop.subarray(at % stop.length, (at % stop.length) + 160);
      at += 160;
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header.writeUInt16BE(seq++, 2);
      header.writeUInt32BE(seq * 160, 4);
      header.writeUInt32BE(0xbe0c4, 8);
      rtp.send(
        Buffer.concat([header, frame.length === 160 ? frame : Buffer.alloc(160, 0xff)]),
        call.mediaPort,
        '127.0.0.1',
      );
    }, 20);
    await until('the runtime gives the caller the floor', () => decidedAt !== undefined, 60_000).catch(() => {});
    clearInterval(timer);
    // Packets already on the wire at the decision may still land: give them a second.
    await new Promise((r) => setTimeout(r, 1000));
    const spoken = arrivals.filter((a) => decidedAt === undefined || a.at <= decidedAt);
    // Within a talkspurt only: the marker bit starts the next utterance's.
    const jitter = spoken.slice(1).flatMap((a, i) => (a.marker ? [] : [Math.abs(a.at - spoken[i]!.at - 20)]));
    const lastVoiced = arrivals.filter((a) => a.voiced).at(-1)?.at;
    await call.bye();
    return {
      jitter,
      ...(decidedAt !== undefined && lastVoiced !== undefined ? { silenceMs: lastVoiced - decidedAt } : {}),
    };
  } finally {
    off();
    sip.close();
    rtp.close();
  }
}

/** The `telephony` section of `npm run bench`: 200 calls (20 with `--quick`), printed as a table. */
export async function telephonySection(quick: boolean): Promise<string> {
  process.stderr.write('telephony: SIPp calls with RTP on one SIP bridge…\n');
  const calls = quick ? 20 : 200;
  const b = await runTelephonyBench({ calls, rate: 10, holdMs: quick ? 15_000 : 40_000, probes: quick ? 1 : 3 });
  const silence = b.silenceMs.map((ms) => ms.toFixed(0)).join(', ') || 'no decision';
  return table(
    `Telephony: concurrent SIP calls with RTP on one bridge process, reference model behind it (targets: >= 200 calls, interruption to silence <= 100 ms)`,
    [
      {
        calls: b.calls,
        successful: b.successful,
        failed: b.failed,
        'peak held': b.peakConcurrent,
        'setup p50 ms': b.setupP50Ms,
        'setup p99 ms': b.setupP99Ms,
        'RTP jitter p50 ms': b.jitterP50Ms,
        'RTP jitter p99 ms': b.jitterP99Ms,
        'interruption to silence ms': silence,
        'bridge CPU s': b.bridgeCpuS,
      },
    ],
  );
}
