import type { RealtimeTransport } from '../realtime/realtime-transport.ts';

export interface SentEvent {
  type: string;
  event_id: string;
  [key: string]: unknown;
}

/** FAKE client socket for unit tests: keeps what the edge sent, parsed, and how it closed. */
export class FakeTransport implements RealtimeTransport {
  readonly sent: SentEvent[] = [];
  closedWith: { code: number; reason: string } | undefined;
  buffered = 0;

  send(text: string): void {
    this.sent.push(JSON.parse(text) as SentEvent);
  }

  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }

  bufferedAmount(): number {
    return this.buffered;
  }

  types(): string[] {
    return this.sent.map((event) => event.type);
  }

  ofType(type: string): SentEvent[] {
    return this.sent.filter((event) => event.type === type);
  }

  last(): SentEvent {
    const event = this.sent[this.sent.length - 1];
    if (event === undefined) throw new Error('nothing sent');
    return event;
  }

  /** Forget what was sent so far (to look only at what a step produces). */
  drain(): SentEvent[] {
    return this.sent.splice(0, this.sent.length);
  }
}
