import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../test/support/baresip.ts';
import { BridgeUnderTest } from '../test/support/sip-bridge-process.ts';
import { SIPP_SCENARIOS } from '../test/support/sipp.ts';
import { until } from '../test/support/until.ts';
import { percentile, table } from './report.ts';
import { type CallFailures, callFailures } from './telephony-failures.ts';
import { type ProbeResult, probeCall } from './telephony-probe.ts';

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
  /** Why the failed calls failed, SIPp's view joined with the bridge's. */
  failures: CallFailures;
  /** Most calls the bridge held at once (answered, not ended), from its own log. */
  peakConcurrent: number;
  setupP50Ms: number;
  setupP99Ms: number;
  /** |inter-arrival - 20 ms| of the bridge's RTP to a probe, while the assistant spoke. */
  jitterP50Ms: number;
  jitterP99Ms: number;
  /** Per valid probe: the runtime's interruption decision -> the last voiced RTP packet of the cut talkspurt. */
  silenceMs: number[];
  /** Per valid probe: decision -> the end of the assistant's voice at a phone playing the RTP as it comes. */
  earMs: number[];
  /** Per valid probe: decision -> the bridge's call core dropping the queued audio. */
  clearMs: number[];
  /** Probes without a figure, and why (e.g. the assistant was not speaking at the decision). */
  invalidProbes: string[];
  /** Foreground steps of the worker's sessions that missed their deadline, of all steps, during the run. */
  workerMissed: { missed: number; steps: number };
  /** CPU seconds of the bridge process, of this process (the worker: session host, relay, reference model threads; and the probes), and of SIPp. */
  cpuS: { bridge: number; worker: number; sipp: number };
  /** Caller audio the bridge's link to the worker dropped because the worker did not keep up (`rate_limited`). */
  linkDrops: { sessions: number };
  /** The bridge's own event loop delay, worst 10 s interval (its `sip bridge load` lines). */
  bridgeLoop: { p99Ms: number; maxMs: number };
}

/**
 * Concurrent phone calls on one SIP bridge process with the embedded runtime (reference model)
 * behind it over the relay: SIPp ramps `calls` calls (bench-call.xml: PCMU, RTP streamed from a
 * spoken request on a loop) and holds them; at the peak, probe calls of our own ask a question
 * (in-dialog MESSAGE), capture the bridge's RTP on a socket we hold (arrival jitter), and barge in
 * with speech while the answer plays (telephony-probe.ts): the time from the runtime's interruption
 * decision (its timeline frame, in this process) to the last voiced packet of the cut talkspurt is
 * the interruption-to-silence latency. The worker is given room for every call (VENUS_MAX_SESSIONS):
 * what is measured is the bridge, and a capacity calibrated at start on a shared 2-core machine
 * (52 to 143 sessions run to run) would refuse calls for reasons that are not the bridge's; its
 * deadline misses are reported instead. Figures, not checks.
 */
export async function runTelephonyBench(options: TelephonyBenchOptions): Promise<TelephonyBench> {
  const bridge = await BridgeUnderTest.start(
    { routes: [{ number: '*', tenant: 'default' }] },
    { VENUS_SIP_MAX_CALLS: String(options.calls + 50), VENUS_LOG_LEVEL: 'info' },
    { modelEnv: { VENUS_MAX_SESSIONS: String(options.calls + options.probes + 10) } },
  );
  const { dir } = bridge;
  try {
    speechFile(dir, 'bench.ulaw', "What's the weather in Paris?", 3);
    speechFile(dir, 'stop.ulaw', 'Stop. Wait, wait.', 1);
    const steps = bridge.runtime.host.stepStats;
    steps.reset();
    const benchCpu = process.cpuUsage();
    const sipp = runLoad(bridge, options, await freePort());
    const answered = new LineCounter('"call answered"');
    const ended = new LineCounter('"call ended"');
    const open = () => answered.count(bridge.output) - ended.count(bridge.output);
    let peak = 0;
    let sippCpuS = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, open());
      if (sipp.pid !== undefined) sippCpuS = cpuSeconds(sipp.pid) ?? sippCpuS;
    }, 100);
    await until('the load reached its peak', () => open() >= options.calls || sipp.exited, options.holdMs * 4);
    const jitter: number[] = [];
    const probes: ProbeResult[] = [];
    for (let i = 0; i < options.probes; i++) {
      const probe = await probeCall(bridge, `probe-${i}`, dir);
      jitter.push(...probe.jitter);
      probes.push(probe);
    }
    const figures = (pick: (p: ProbeResult) => number | undefined) =>
      probes.flatMap((p) => (p.invalid === undefined && pick(p) !== undefined ? [pick(p)!] : []));
    const result = await sipp.done;
    clearInterval(sampler);
    const used = process.cpuUsage(benchCpu);
    return {
      calls: options.calls,
      successful: result.successful,
      failed: result.failed,
      failures: result.failures,
      peakConcurrent: peak,
      setupP50Ms: percentile(result.setupMs, 50),
      setupP99Ms: percentile(result.setupMs, 99),
      jitterP50Ms: percentile(jitter, 50),
      jitterP99Ms: percentile(jitter, 99),
      silenceMs: figures((p) => p.silenceMs),
      earMs: figures((p) => p.earMs),
      clearMs: figures((p) => p.clearMs),
      invalidProbes: probes.flatMap((p) => (p.invalid === undefined ? [] : [p.invalid])),
      workerMissed: { missed: steps.missed, steps: steps.steps + steps.missed },
      cpuS: {
        bridge: cpuSeconds(bridge.pid) ?? 0,
        worker: (used.user + used.system) / 1e6,
        sipp: sippCpuS,
      },
      ...bridgeSide(bridge.output),
    };
  } finally {
    keepLogs(bridge);
    await bridge.close();
  }
}

/** VENUS_BENCH_TELEPHONY_LOGS=<dir>: the bridge's log and SIPp's traces are copied there before the run's directory goes. */
function keepLogs(bridge: BridgeUnderTest): void {
  const to = process.env.VENUS_BENCH_TELEPHONY_LOGS;
  if (!to) return;
  mkdirSync(to, { recursive: true });
  writeFileSync(path.join(to, 'bridge.log'), bridge.output);
  for (const f of readdirSync(bridge.dir))
    if (/\.(log|csv)$/.test(f)) copyFileSync(path.join(bridge.dir, f), path.join(to, f));
}

/** Counts lines holding `needle` in text that only grows, reading only what is new each time. */
class LineCounter {
  #at = 0;
  #n = 0;
  constructor(readonly needle: string) {}

  count(text: string): number {
    for (let at = text.indexOf(this.needle, this.#at); at >= 0; at = text.indexOf(this.needle, at + 1)) {
      this.#n += 1;
      this.#at = at + 1;
    }
    return this.#n;
  }
}

/** utime + stime of a process, from clock ticks (100 a second on Linux); undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(stat[11]) + Number(stat[12])) / 100;
  } catch {
    return undefined;
  }
}

/** What the bridge's log says of its side: input dropped on the worker link, and its event loop delay. */
function bridgeSide(output: string): Pick<TelephonyBench, 'linkDrops' | 'bridgeLoop'> {
  const sessions = new Set<string>();
  const loop = { p99Ms: 0, maxMs: 0 };
  for (const line of output.split('\n')) {
    if (line.includes('the link to the GPU worker is congested')) {
      sessions.add((JSON.parse(line) as { session?: string }).session ?? '');
    } else if (line.includes('"sip bridge load"')) {
      const entry = JSON.parse(line) as { loopDelayP99Ms: number; loopDelayMaxMs: number };
      loop.p99Ms = Math.max(loop.p99Ms, entry.loopDelayP99Ms);
      loop.maxMs = Math.max(loop.maxMs, entry.loopDelayMaxMs);
    }
  }
  return { linkDrops: { sessions: sessions.size }, bridgeLoop: loop };
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
  pid: number | undefined;
  done: Promise<{ successful: number; failed: number; setupMs: number[]; failures: CallFailures }>;
}

/** SIPp ramping and holding the calls; its screen and RTT (call setup) files are read when it exits. */
function runLoad(bridge: BridgeUnderTest, o: TelephonyBenchOptions, mediaPort: number): LoadRun {
  const none: CallFailures = { reasons: {}, counters: {} };
  const run: LoadRun = {
    exited: false,
    pid: undefined,
    done: Promise.resolve({ successful: 0, failed: 0, setupMs: [], failures: none }),
  };
  const child = spawn(
    'sipp',
    [
      bridge.target,
      ...['-sf', path.join(SIPP_SCENARIOS, 'bench-call.xml'), '-s', 'load', '-i', '127.0.0.1', '-mi', '127.0.0.1'],
      ...['-mp', String(mediaPort), '-r', String(o.rate), '-l', String(o.calls), '-m', String(o.calls)],
      ...['-d', String(o.holdMs), '-nostdin', '-trace_rtt', '-rtt_freq', '1', '-trace_screen'],
      // Why each failed call failed: the error trace (what came instead, which timer ran out) and
      // the cumulative Failed* counters, read by telephony-failures.ts.
      ...['-trace_err', '-error_file', 'load_errors.log', '-trace_stat', '-stf', 'load_stats.csv', '-fd', '1'],
      ...['-timeout', `${Math.ceil((o.holdMs * 3) / 1000) + 120}s`, '-timeout_error'],
    ],
    { cwd: bridge.dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  run.pid = child.pid;
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
      const read = (name: string) => (files.includes(name) ? readFileSync(path.join(bridge.dir, name), 'utf8') : '');
      resolve({
        successful: count('Successful call'),
        failed: count('Failed call'),
        setupMs,
        failures: callFailures({
          sippErrors: read('load_errors.log'),
          sippStats: read('load_stats.csv'),
          bridgeOutput: bridge.output,
        }),
      });
    });
  });
  return run;
}

/** The `telephony` section of `npm run bench`: 200 calls (20 with `--quick`), printed as a table. */
export async function telephonySection(quick: boolean): Promise<string> {
  process.stderr.write('telephony: SIPp calls with RTP on one SIP bridge…\n');
  const calls = quick ? 20 : 200;
  const b = await runTelephonyBench({ calls, rate: 10, holdMs: quick ? 15_000 : 40_000, probes: quick ? 1 : 3 });
  const list = (values: number[]) => values.map((ms) => ms.toFixed(0)).join(', ') || 'none';
  const report = table(
    `Telephony: concurrent SIP calls with RTP on one bridge process, reference model behind it (targets: >= 200 calls, none failed; interruption to silence <= 100 ms)`,
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
        'CPU s bridge / worker / SIPp': `${b.cpuS.bridge.toFixed(1)} / ${b.cpuS.worker.toFixed(1)} / ${b.cpuS.sipp.toFixed(1)}`,
        'bridge loop delay p99 / max ms': `${b.bridgeLoop.p99Ms} / ${b.bridgeLoop.maxMs}`,
        'worker steps missed': `${b.workerMissed.missed} / ${b.workerMissed.steps}`,
        'calls with input dropped (worker behind)': b.linkDrops.sessions,
      },
    ],
  );
  const interruption = table('Telephony: interruption at the peak, per probe call (ms after the runtime decided)', [
    {
      'to bridge clear': list(b.clearMs),
      'to last voiced RTP packet': list(b.silenceMs),
      'to end of voice at the phone': list(b.earMs),
      'probes without a figure': b.invalidProbes.join('; ') || 'none',
    },
  ]);
  return `${report}\n${failureReport(b.failures)}\n${interruption}`;
}

function failureReport(f: CallFailures): string {
  const reasons = Object.entries(f.reasons).sort((a, b) => b[1] - a[1]);
  if (reasons.length === 0 && Object.keys(f.counters).length === 0) return 'failed calls: none';
  const counters = Object.entries(f.counters)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  return [
    `failed calls by cause (SIPp | bridge): ${reasons.length === 0 ? 'none traced' : ''}`,
    ...reasons.map(([reason, n]) => `  ${n} x ${reason}`),
    `SIPp Failed* counters: ${counters || 'all 0'}`,
    ...(f.example === undefined ? [] : ['first traced failure:', f.example]),
  ].join('\n');
}
