import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import path from 'node:path';
import { until } from './until.ts';

/** One event or response baresip's ctrl_tcp module sent (netstring-framed JSON). */
export interface BaresipMessage {
  event?: boolean;
  response?: boolean;
  type?: string;
  ok?: boolean;
  data?: string;
  token?: string;
  param?: string;
}

/** A free TCP/UDP port on 127.0.0.1 (asked of the kernel; baresip needs numbers in its config). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A real baresip (Debian baresip-core 1.0) as a headless user agent: its config dir is made in `dir`
 * (G.711, the caller's audio read from `sourceWav` by `aufile` (8 kHz 16-bit mono only), what it
 * hears dumped by `sndfile` to `dir/recordings/*-dec.wav`, playback to `aubridge` (nowhere), and
 * `ctrl_tcp` on a port of its own), driven over ctrl_tcp: netstring JSON commands
 * (`{"command":"dial","params":"sip:...","token":"1"}`), answered by responses and events
 * (`CALL_ESTABLISHED`, `CALL_CLOSED`, ...).
 */
export class Baresip {
  readonly messages: BaresipMessage[] = [];
  readonly recordings: string;
  readonly #log: { text: string };
  readonly #child: ChildProcess;
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #token = 0;

  private constructor(child: ChildProcess, socket: Socket, recordings: string, log: { text: string }) {
    this.#child = child;
    this.#log = log;
    this.#socket = socket;
    this.recordings = recordings;
    socket.on('data', (d: Buffer) => this.#read(d));
  }

  static async start(dir: string, sourceWav: string): Promise<Baresip> {
    const [sipPort, ctrlPort] = [await freePort(), await freePort()];
    const config = path.join(dir, 'baresip');
    const recordings = path.join(dir, 'recordings');
    mkdirSync(config, { recursive: true });
    mkdirSync(recordings, { recursive: true });
    const modules = ['g711', 'aufile', 'aubridge', 'sndfile', 'account', 'menu', 'ctrl_tcp'];
    writeFileSync(
      path.join(config, 'config'),
      [
        `sip_listen 127.0.0.1:${sipPort}`,
        // Without it the SDP advertises whichever interface baresip picks.
        'net_interface 127.0.0.1',
        `audio_source aufile,${sourceWav}`,
        'audio_player aubridge,nowhere',
        'module_path /usr/lib/baresip/modules',
        ...modules.map((m) => `module ${m}.so`),
        `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
        `snd_path ${recordings}`,
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(config, 'accounts'), '<sip:caller@127.0.0.1>;regint=0\n');
    const child = spawn('baresip', ['-f', config], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = { text: '' };
    const collect = (d: Buffer) => {
      log.text = (log.text + d.toString()).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    await until('baresip is ready', () => log.text.includes('baresip is ready') || child.exitCode !== null, 30_000);
    if (child.exitCode !== null) throw new Error(`baresip exited: ${log.text}`);
    const socket = tcpConnect(ctrlPort, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new Baresip(child, socket, recordings, log);
  }

  /** Sends a ctrl_tcp command and waits for its response (which must be ok). */
  async command(command: string, params?: string): Promise<BaresipMessage> {
    this.#token += 1;
    const token = String(this.#token);
    this.#send({ command, ...(params === undefined ? {} : { params }), token });
    const response = await this.waitFor(`the response to ${command}`, (m) => m.response === true && m.token === token);
    if (response.ok !== true) throw new Error(`baresip refused ${command}: ${response.data}`);
    return response;
  }

  /** Waits for an event or response that `match` picks, and returns it. */
  async waitFor(what: string, match: (m: BaresipMessage) => boolean, timeoutMs = 90_000): Promise<BaresipMessage> {
    await until(`baresip: ${what}`, () => this.messages.some(match), timeoutMs).catch((error: unknown) => {
      throw new Error(
        `${error}; got ${this.messages.map((m) => m.type ?? m.token).join(' ')}; ${this.#log.text.slice(-3000)}`,
      );
    });
    return this.messages.find(match)!;
  }

  waitEvent(type: string): Promise<BaresipMessage> {
    return this.waitFor(type, (m) => m.event === true && m.type === type);
  }

  /** The `sndfile` dump of what baresip heard (decoded from the bridge's RTP). */
  heardWav(): string {
    const file = readdirSync(this.recordings).find((f) => f.endsWith('-dec.wav'));
    if (file === undefined) throw new Error(`no recording in ${this.recordings}`);
    return path.join(this.recordings, file);
  }

  /** Quits baresip (over ctrl_tcp) and waits for it to exit, so its recordings are complete. */
  async quit(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    this.#send({ command: 'quit' });
    await exited;
    this.#socket.destroy();
  }

  /** What baresip printed last (its console), for failure messages. */
  get output(): string {
    return this.#log.text;
  }

  #send(message: object): void {
    const json = Buffer.from(JSON.stringify(message));
    this.#socket.write(Buffer.concat([Buffer.from(`${json.length}:`), json, Buffer.from(',')]));
  }

  #read(data: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, data]);
    for (;;) {
      const colon = this.#buffer.indexOf(0x3a);
      if (colon < 0) return;
      const length = Number(this.#buffer.subarray(0, colon).toString());
      if (this.#buffer.length < colon + length + 2) return;
      this.messages.push(JSON.parse(this.#buffer.subarray(colon + 1, colon + 1 + length).toString()) as BaresipMessage);
      this.#buffer = this.#buffer.subarray(colon + length + 2);
    }
  }
}
