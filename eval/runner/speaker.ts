import { resamplePcm16 } from '@venus/gpu-worker';
import { EVAL_RATE_HZ } from '../audio/wav-io.ts';

const OUT_RATE_HZ = 24_000;

interface Chunk {
  itemId: string;
  responseId: string | null;
  startMs: number;
  pcm: Int16Array;
}

/** Where an item's audio actually played, on the client clock (after any barge-in cut). */
export interface ItemPlayout {
  itemId: string;
  responseId: string | null;
  startMs: number;
  endMs: number;
  /** Milliseconds of the item's audio that played. */
  playedMs: number;
  /** Milliseconds received but dropped by a flush (or arriving after one). */
  droppedMs: number;
}

/**
 * A virtual loudspeaker on the client clock: assistant audio (24 kHz) plays in arrival order, each
 * chunk at max(arrival, end of what is queued), as a real client's jitter buffer plays it. A flush
 * (barge-in) drops what has not played yet, and audio arriving later for a flushed item is dropped
 * too, as OpenAI clients do after `speech_started`. `render` writes the time-aligned output track.
 *
 * @example
 *   speaker.play('utt_1', 'resp_1', pcm24k, client.now());
 *   const cut = speaker.flush(client.now()); // [{ itemId, playedMs }]
 */
export class Speaker {
  private readonly chunks: Chunk[] = [];
  private readonly flushed = new Set<string>();
  private readonly dropped = new Map<string, number>();
  private cursorMs = 0;

  play(itemId: string, responseId: string | null, pcm: Int16Array, nowMs: number): void {
    if (this.flushed.has(itemId)) {
      this.dropped.set(itemId, (this.dropped.get(itemId) ?? 0) + (pcm.length / OUT_RATE_HZ) * 1000);
      return;
    }
    const startMs = Math.max(nowMs, this.cursorMs);
    this.chunks.push({ itemId, responseId, startMs, pcm });
    this.cursorMs = startMs + (pcm.length / OUT_RATE_HZ) * 1000;
  }

  /** Drops the unplayed audio; returns the items that were cut, with how much of each had played. */
  flush(nowMs: number): { itemId: string; playedMs: number }[] {
    const cut = new Map<string, number>();
    for (const c of this.chunks) {
      const durationMs = (c.pcm.length / OUT_RATE_HZ) * 1000;
      if (c.pcm.length === 0 || c.startMs + durationMs <= nowMs) continue;
      const keep = Math.max(0, Math.floor(((nowMs - c.startMs) / 1000) * OUT_RATE_HZ));
      this.dropped.set(c.itemId, (this.dropped.get(c.itemId) ?? 0) + durationMs - (keep / OUT_RATE_HZ) * 1000);
      c.pcm = c.pcm.subarray(0, keep);
      cut.set(c.itemId, 0);
      this.flushed.add(c.itemId);
    }
    this.cursorMs = Math.min(this.cursorMs, nowMs);
    const played = this.playedMs(nowMs);
    return [...cut.keys()].map((itemId) => ({ itemId, playedMs: played.get(itemId) ?? 0 }));
  }

  isPlaying(nowMs: number): boolean {
    return this.cursorMs > nowMs;
  }

  /** Played milliseconds per item as of `nowMs`. */
  playedMs(nowMs: number): Map<string, number> {
    const played = new Map<string, number>();
    for (const c of this.chunks) {
      const ms = Math.max(0, Math.min(nowMs - c.startMs, (c.pcm.length / OUT_RATE_HZ) * 1000));
      played.set(c.itemId, (played.get(c.itemId) ?? 0) + ms);
    }
    return played;
  }

  endMs(): number {
    return this.cursorMs;
  }

  items(): ItemPlayout[] {
    const byItem = new Map<string, ItemPlayout>();
    for (const c of this.chunks) {
      const durationMs = (c.pcm.length / OUT_RATE_HZ) * 1000;
      const item = byItem.get(c.itemId) ?? {
        itemId: c.itemId,
        responseId: c.responseId,
        startMs: c.startMs,
        endMs: c.startMs,
        playedMs: 0,
        droppedMs: this.dropped.get(c.itemId) ?? 0,
      };
      if (durationMs > 0) item.endMs = Math.max(item.endMs, c.startMs + durationMs);
      item.playedMs += durationMs;
      byItem.set(c.itemId, item);
    }
    return [...byItem.values()].filter((i) => i.playedMs > 0 || i.droppedMs > 0);
  }

  /** The output track, 16 kHz, from client time 0 to `durationMs`. */
  render(durationMs: number): Int16Array {
    const out = new Int16Array(Math.ceil((durationMs / 1000) * OUT_RATE_HZ));
    for (const c of this.chunks) {
      const at = Math.round((c.startMs / 1000) * OUT_RATE_HZ);
      for (let i = 0; i < c.pcm.length; i++) {
        const j = at + i;
        if (j >= 0 && j < out.length) out[j] = Math.max(-32768, Math.min(32767, out[j]! + c.pcm[i]!));
      }
    }
    return resamplePcm16(out, OUT_RATE_HZ, EVAL_RATE_HZ);
  }
}
