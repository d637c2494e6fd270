import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TimelineEvent } from '@venus/protocol';
import {
  type EmbeddedRuntime,
  type EmbeddedRuntimeOptions,
  startEmbeddedRuntime,
} from '../../embedded/embedded-runtime.ts';
import { type RelayServer, serveRelay } from '../../gpu-worker/src/relay/index.ts';
import { until } from './until.ts';

const WAIT_MS = 90_000;

/**
 * The SIP bridge as its own process (`sip-bridge/src/sip-main.ts`) with real sessions behind it: the
 * embedded runtime's session host (reference model) served over the relay, as a GPU worker serves
 * edges. `dir` is a fresh working directory (routes.json, a `pcap` link to SIPp's bundled pcaps).
 */
export class BridgeUnderTest {
  readonly runtime: EmbeddedRuntime;
  readonly dir: string;
  /** host:port of the bridge's SIP (UDP and TCP). */
  readonly target: string;
  readonly #relay: RelayServer;
  readonly #child: ChildProcess;
  readonly #output: { text: string };

  private constructor(
    runtime: EmbeddedRuntime,
    relay: RelayServer,
    child: ChildProcess,
    dir: string,
    target: string,
    output: { text: string },
  ) {
    this.runtime = runtime;
    this.#relay = relay;
    this.#child = child;
    this.dir = dir;
    this.target = target;
    this.#output = output;
  }

  /** `runtime`: options of the embedded runtime behind the bridge (e.g. its model's session capacity). */
  static async start(
    routes: unknown,
    env: Record<string, string> = {},
    runtime: EmbeddedRuntimeOptions = {},
  ): Promise<BridgeUnderTest> {
    const dir = mkdtempSync(path.join(tmpdir(), 'venus-sip-'));
    symlinkSync('/usr/share/sip-tester', path.join(dir, 'pcap'));
    writeFileSync(path.join(dir, 'routes.json'), JSON.stringify(routes));
    const embedded = await startEmbeddedRuntime({ ...runtime, port: 0 });
    const relay = await serveRelay({ host: embedded.host, port: 0 });
    const child = spawn(process.execPath, ['--import', 'tsx', 'sip-bridge/src/sip-main.ts'], {
      env: {
        ...process.env,
        VENUS_SIP_PORT: '0',
        VENUS_SIP_CONFIG: path.join(dir, 'routes.json'),
        VENUS_WORKERS: relay.url,
        VENUS_LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Everything the bridge printed, kept whole: the tests read its `call answered` lines.
    const output = { text: '' };
    const collect = (d: Buffer) => {
      output.text += d.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const ready = /sip bridge ready: sip:(\S+) /;
    await until('the bridge is ready', () => ready.test(output.text) || child.exitCode !== null, WAIT_MS);
    if (child.exitCode !== null) throw new Error(`the bridge exited: ${output.text}`);
    return new BridgeUnderTest(embedded, relay, child, dir, ready.exec(output.text)![1]!, output);
  }

  get output(): string {
    return this.#output.text;
  }

  get pid(): number {
    return this.#child.pid!;
  }

  /** Whether the bridge process has exited (and how). */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    const { exitCode, signalCode } = this.#child;
    return exitCode === null && signalCode === null ? undefined : { code: exitCode, signal: signalCode };
  }

  /** The sessions the bridge opened for a dialled number, from its `call answered` log lines. */
  sessionsFor(number: string): string[] {
    const out: string[] = [];
    for (const line of this.#output.text.split('\n')) {
      if (!line.includes('"call answered"')) continue;
      const entry = JSON.parse(line) as { number?: string; session?: string };
      if (entry.number === number && entry.session !== undefined) out.push(entry.session);
    }
    return out;
  }

  async timeline(session: string): Promise<TimelineEvent[]> {
    await this.runtime.host.session(session)?.flushed();
    return this.runtime.store.read(session);
  }

  /** Waits until `cond` holds on the session's stored timeline, and returns that timeline. */
  async waitTimeline(
    session: string,
    what: string,
    cond: (events: TimelineEvent[]) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<TimelineEvent[]> {
    let events: TimelineEvent[] = [];
    await until(
      `session ${session}: ${what}`,
      () => cond(events),
      timeoutMs,
      async () => {
        events = await this.timeline(session);
      },
    ).catch((error: unknown) => {
      throw new Error(`${error}; timeline (without user.audio): ${summarise(events)}`);
    });
    return events;
  }

  closedTimeline(session: string): Promise<TimelineEvent[]> {
    return this.waitTimeline(session, 'closed', (events) => events.some((e) => e.type === 'session.closed'));
  }

  async close(): Promise<void> {
    if (this.exit === undefined) {
      this.#child.kill('SIGTERM');
      await new Promise((r) => this.#child.once('exit', r));
    }
    await this.#relay.close();
    await this.runtime.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A timeline in brief for failure messages: event types, with what was heard and said. */
function summarise(events: TimelineEvent[]): string {
  return events
    .flatMap((e) => {
      if (e.type === 'user.audio' || e.type === 'assistant.audio' || e.type === 'playback.ack') return [];
      if (e.type === 'user.transcript') return [`transcript:"${e.data.text}"`];
      if (e.type === 'assistant.text') return [`text:"${e.data.delta}"`];
      return [e.type];
    })
    .join(' ');
}
