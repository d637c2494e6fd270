/** The part of a data channel this needs: werift's RTCDataChannel, or a fake in tests. */
export interface DataChannelLike {
  readonly readyState: 'connecting' | 'open' | 'closing' | 'closed';
  readonly bufferedAmount: number;
  send(data: string): void;
}

export interface EventsChannelOptions {
  /** Events kept while no channel is open yet (default 1000); beyond that the oldest are dropped. */
  maxPending?: number;
}

/**
 * The `oai-events` data channel as the session sees it: server events are written to it as JSON
 * text, the same events the WebSocket carries. The channel opens some time after the SDP answer
 * (after ICE, DTLS and SCTP), while the session starts at once, so events are held until it opens:
 * `session.created` is always the first thing a client reads. A client without a data channel
 * (audio only) never drains the queue; it is bounded.
 *
 * @example
 *   const events = new EventsChannel();
 *   events.send('{"type":"session.created"}'); // held
 *   events.attach(dataChannel);                  // delivered once the channel is open
 */
export class EventsChannel {
  readonly #maxPending: number;
  #pending: string[] = [];
  #dropped = 0;
  #channel: DataChannelLike | undefined;

  constructor(options: EventsChannelOptions = {}) {
    this.#maxPending = options.maxPending ?? 1000;
  }

  /** Events dropped because no channel opened in time. */
  get dropped(): number {
    return this.#dropped;
  }

  get isOpen(): boolean {
    return this.#channel?.readyState === 'open';
  }

  /** Bytes written but not yet on the wire, plus what waits for the channel to open. */
  bufferedAmount(): number {
    const pending = this.#pending.reduce((sum, text) => sum + text.length, 0);
    return pending + (this.#channel?.bufferedAmount ?? 0);
  }

  /** The client's channel: call when it is announced, and again when it opens. */
  attach(channel: DataChannelLike): void {
    this.#channel = channel;
    if (channel.readyState !== 'open') return;
    const pending = this.#pending;
    this.#pending = [];
    for (const text of pending) channel.send(text);
  }

  send(text: string): void {
    const channel = this.#channel;
    if (channel?.readyState === 'open') {
      channel.send(text);
      return;
    }
    if (channel !== undefined && channel.readyState !== 'connecting') return; // closing or closed: the session ends
    this.#pending.push(text);
    if (this.#pending.length > this.#maxPending) {
      this.#pending.shift();
      this.#dropped += 1;
    }
  }
}
