import type { PlayoutMark } from './paced-g711-sender.ts';

/**
 * Marks sent and not yet echoed. A far end that plays audio echoes them in order, so a handful is
 * the steady state; 1,024 (over 4 minutes of audio at one mark per 240 ms, under Twilio's 10
 * minute buffer limit) bounds one that never echoes: the oldest is forgotten first.
 */
export const MAX_OUTSTANDING_MARKS = 1024;

/**
 * The names of the marks a call sent, and the playout positions they stand for. Names are a
 * counter (`m1`, `m2`, …) so an echo names nothing the far end could forge into another session.
 *
 * @example
 *   const marks = new CallMarks();
 *   const name = marks.add({ utteranceId: 'utt_1', playedMs: 240 }); // 'm1'
 *   marks.take(name); // { utteranceId: 'utt_1', playedMs: 240 }
 */
export class CallMarks {
  readonly #outstanding = new Map<string, PlayoutMark>();
  #count = 0;
  #played = 0;

  /** Marks sent so far. */
  get sent(): number {
    return this.#count;
  }

  /** Echoes that named an outstanding mark. */
  get played(): number {
    return this.#played;
  }

  get outstanding(): number {
    return this.#outstanding.size;
  }

  add(mark: PlayoutMark): string {
    this.#count += 1;
    const name = `m${this.#count}`;
    this.#outstanding.set(name, mark);
    if (this.#outstanding.size > MAX_OUTSTANDING_MARKS) {
      this.#outstanding.delete(this.#outstanding.keys().next().value!);
    }
    return name;
  }

  /** The position an echoed mark stands for; undefined for a name never sent, already echoed, or cleared. */
  take(name: string): PlayoutMark | undefined {
    const mark = this.#outstanding.get(name);
    if (mark === undefined) return undefined;
    this.#outstanding.delete(name);
    this.#played += 1;
    return mark;
  }

  /** The far end dropped its buffer: echoes of marks sent before now say nothing about what was heard. */
  clear(): void {
    this.#outstanding.clear();
  }
}
