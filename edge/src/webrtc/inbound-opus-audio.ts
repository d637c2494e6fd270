import { OPUS_RTP_CLOCK_HZ, type OpusCodec } from './opus-codec.ts';

/** The fields of an inbound RTP packet this needs (werift's RtpPacket has them). */
export interface InboundRtp {
  sequenceNumber: number;
  timestamp: number;
  payload: Uint8Array;
}

export interface InboundOpusAudioOptions {
  codec: OpusCodec;
  /** Decoded audio, mono at the codec's rate, in batches of about `batchMs`. */
  onAudio(pcm: Int16Array): void;
  /** Default 40 ms: two RTP frames per message to the core, half the per-message overhead at 20 ms of added delay. */
  batchMs?: number;
  /** Longest gap in the stream filled with silence (default 500 ms); longer gaps are skipped, not replayed. */
  maxGapMs?: number;
}

export interface InboundOpusStats {
  packets: number;
  /** Packets dropped as duplicates, reordered too late, or undecodable. */
  dropped: number;
  /** Milliseconds of silence inserted for lost packets. */
  concealedMs: number;
}

/**
 * The microphone side of a WebRTC session: RTP Opus packets in, PCM batches out. Packets that
 * arrive out of order after a later one are dropped (a 20 ms hole costs less than replaying late
 * audio to voice activity detection); lost packets become silence of their length, so the stream
 * keeps the sender's timing (RTP timestamps say how much audio is missing).
 *
 * @example
 *   const inbound = new InboundOpusAudio({ codec, onAudio: (pcm) => append(pcm) });
 *   track.onReceiveRtp.subscribe((rtp) => inbound.push({ ...rtp.header, payload: rtp.payload }));
 */
export class InboundOpusAudio {
  readonly #codec: OpusCodec;
  readonly #onAudio: (pcm: Int16Array) => void;
  readonly #batchSamples: number;
  readonly #maxGapSamples: number;
  readonly #samplesPerTick: number;
  #batch: Int16Array[] = [];
  #batched = 0;
  #lastSeq: number | undefined;
  #nextTimestamp: number | undefined;
  readonly #stats: InboundOpusStats = { packets: 0, dropped: 0, concealedMs: 0 };

  constructor(options: InboundOpusAudioOptions) {
    this.#codec = options.codec;
    this.#onAudio = options.onAudio;
    this.#batchSamples = Math.round(((options.batchMs ?? 40) * options.codec.rateHz) / 1000);
    this.#maxGapSamples = Math.round(((options.maxGapMs ?? 500) * options.codec.rateHz) / 1000);
    this.#samplesPerTick = options.codec.rateHz / OPUS_RTP_CLOCK_HZ;
  }

  get stats(): Readonly<InboundOpusStats> {
    return this.#stats;
  }

  push(packet: InboundRtp): void {
    this.#stats.packets += 1;
    if (this.#lastSeq !== undefined && seqDelta(packet.sequenceNumber, this.#lastSeq) <= 0) {
      this.#stats.dropped += 1;
      return;
    }
    this.#lastSeq = packet.sequenceNumber;
    let pcm: Int16Array;
    try {
      pcm = this.#codec.decode(packet.payload);
    } catch {
      this.#stats.dropped += 1;
      return;
    }
    if (this.#nextTimestamp !== undefined) {
      const missingTicks = (packet.timestamp - this.#nextTimestamp) | 0;
      const missing = Math.round(missingTicks * this.#samplesPerTick);
      if (missing > 0 && missing <= this.#maxGapSamples) {
        this.#add(new Int16Array(missing));
        this.#stats.concealedMs += (missing / this.#codec.rateHz) * 1000;
      }
    }
    this.#nextTimestamp = (packet.timestamp + Math.round(pcm.length / this.#samplesPerTick)) >>> 0;
    this.#add(pcm);
  }

  /** Hands over whatever is batched. */
  flush(): void {
    if (this.#batched === 0) return;
    const out = this.#batch.length === 1 ? this.#batch[0]! : concat(this.#batch, this.#batched);
    this.#batch = [];
    this.#batched = 0;
    this.#onAudio(out);
  }

  #add(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.#batch.push(pcm);
    this.#batched += pcm.length;
    if (this.#batched >= this.#batchSamples) this.flush();
  }
}

/** Signed distance between 16-bit RTP sequence numbers, wrap-around aware. */
export function seqDelta(a: number, b: number): number {
  return ((a - b + 0x8000) & 0xffff) - 0x8000;
}

function concat(parts: Int16Array[], total: number): Int16Array {
  const out = new Int16Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
