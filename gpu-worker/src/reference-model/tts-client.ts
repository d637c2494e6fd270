import type { MessagePort } from 'node:worker_threads';
import { VenusError } from '@venus/protocol';
import type { TtsRequest, TtsResponse } from './worker-protocol.ts';

interface Pending {
  port: number;
  resolve: (pcm: Int16Array) => void;
  reject: (err: unknown) => void;
}

/**
 * The inference worker's handle on the TTS workers: one message port per TTS thread, each request
 * sent to the port with the fewest outstanding requests. Speech comes back as a transferred buffer.
 *
 * @example
 *   const tts = new TtsClient(workerData.ttsPorts);
 *   const pcm24k = await tts.synthesize('Let me work that out.', 'en-us');
 */
export class TtsClient {
  private readonly pending = new Map<number, Pending>();
  private readonly outstanding: number[];
  private nextId = 1;

  constructor(private readonly ports: readonly MessagePort[]) {
    if (ports.length === 0) throw new VenusError('model_unavailable', 'no speech synthesis threads');
    this.outstanding = ports.map(() => 0);
    ports.forEach((port) => {
      port.on('message', (message: TtsResponse) => this.settle(message));
    });
  }

  synthesize(text: string, voice: string): Promise<Int16Array> {
    let port = 0;
    for (let i = 1; i < this.ports.length; i++) if (this.outstanding[i]! < this.outstanding[port]!) port = i;
    const id = this.nextId++;
    this.outstanding[port] = this.outstanding[port]! + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { port, resolve, reject });
      const request: TtsRequest = { t: 'synth', id, text, voice };
      this.ports[port]!.postMessage(request);
    });
  }

  private settle(message: TtsResponse): void {
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    this.outstanding[pending.port] = this.outstanding[pending.port]! - 1;
    if (message.t === 'audio') pending.resolve(message.pcm);
    else pending.reject(new VenusError('model_step_failed', message.message));
  }
}
