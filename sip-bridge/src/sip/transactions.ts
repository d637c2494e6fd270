import { cseq, header, type SipMessage, type SipRequest, type SipResponse, serialise, topVia } from './message.ts';
import { DEFAULT_TIMER_VALUES, type SipTimerValues, systemTimers, type TimerHost } from './timers.ts';

/** Where a message came from or goes to; `connection` names a TCP connection to answer on. */
export interface SipPeer {
  protocol: 'udp' | 'tcp';
  address: string;
  port: number;
  connection?: number;
}

export type SendSip = (bytes: Buffer, peer: SipPeer) => void;

type State = 'trying' | 'proceeding' | 'completed' | 'accepted' | 'confirmed' | 'terminated';

interface Timers {
  host: TimerHost;
  values: SipTimerValues;
}

interface TransactionParts {
  request: SipRequest;
  peer: SipPeer;
  key: string;
  timers: Timers;
  send: SendSip;
  /** The transaction reached Terminated: the layer forgets it. */
  done: (tx: { key: string }) => void;
}

/** What server and client transactions share: the request, where it goes, the clock, the wire. */
abstract class Transaction {
  readonly request: SipRequest;
  readonly peer: SipPeer;
  readonly key: string;
  protected readonly timers: Timers;
  protected readonly send: SendSip;
  protected readonly done: (tx: { key: string }) => void;

  constructor(parts: TransactionParts) {
    this.request = parts.request;
    this.peer = parts.peer;
    this.key = parts.key;
    this.timers = parts.timers;
    this.send = parts.send;
    this.done = parts.done;
  }
}

/**
 * A server transaction (RFC 3261 §17.2, with RFC 6026's Accepted state for INVITE). INVITE: a final
 * non-2xx is retransmitted on Timer G (T1 doubling to T2, unreliable transports only) until the ACK
 * or Timer H (64*T1); a 2xx is retransmitted the same way until the dialog's ACK or Timer L (64*T1),
 * after which `onNoAck` fires. Non-INVITE: a retransmitted request gets the last response again,
 * and the transaction is kept for Timer J (64*T1 on UDP: about 32 s).
 */
export class ServerTransaction extends Transaction {
  state: State;
  #last: Buffer | undefined;
  #lastStatus = 0;
  #ackedTwoHundred = false;
  #retransmit: unknown;
  #expiry: unknown;
  /** Called when a 2xx to an INVITE was never ACKed (Timer L): the call should end. */
  onNoAck: (() => void) | undefined;

  constructor(parts: TransactionParts) {
    super(parts);
    this.state = parts.request.method === 'INVITE' ? 'proceeding' : 'trying';
  }

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** The last final status sent, or 0. */
  get finalStatus(): number {
    return this.#lastStatus >= 200 ? this.#lastStatus : 0;
  }

  respond(response: SipResponse): void {
    if (this.state === 'terminated' || this.state === 'completed' || this.state === 'confirmed') return;
    if (this.state === 'accepted' && response.status >= 300) return;
    const bytes = serialise(response);
    this.#last = bytes;
    this.#lastStatus = response.status;
    this.send(bytes, this.peer);
    if (response.status < 200) {
      if (this.state === 'trying') this.state = 'proceeding';
      return;
    }
    const { t1 } = this.timers.values;
    const reliable = this.peer.protocol !== 'udp';
    if (!this.isInvite) {
      this.state = 'completed';
      this.#expire(reliable ? 0 : 64 * t1);
      return;
    }
    this.state = response.status < 300 ? 'accepted' : 'completed';
    if (!reliable) this.#scheduleRetransmit(t1);
    this.#expiry = this.timers.host.set(() => {
      const unacked = this.state === 'accepted' && !this.#ackedTwoHundred;
      this.#terminate();
      if (unacked) this.onNoAck?.();
    }, 64 * t1);
  }

  /** A retransmission of the request arrived: the last response goes out again. */
  retransmitted(): void {
    if (this.#last !== undefined && this.state !== 'terminated') this.send(this.#last, this.peer);
  }

  /** The ACK: for a non-2xx final, matched by the transaction; for a 2xx, by the dialog. */
  acked(): void {
    if (this.state === 'completed') {
      this.state = 'confirmed';
      this.timers.host.clear(this.#retransmit);
      this.timers.host.clear(this.#expiry);
      // Timer I: absorb ACK retransmissions for T4 (0 on reliable transports).
      this.#expire(this.peer.protocol === 'udp' ? this.timers.values.t4 : 0);
    } else if (this.state === 'accepted') {
      this.#ackedTwoHundred = true;
      this.timers.host.clear(this.#retransmit);
      this.#retransmit = undefined;
    }
  }

  /** Ends the transaction now (the layer is closing). */
  abandon(): void {
    this.#terminate();
  }

  #scheduleRetransmit(interval: number): void {
    this.#retransmit = this.timers.host.set(() => {
      if (this.state !== 'completed' && (this.state !== 'accepted' || this.#ackedTwoHundred)) return;
      if (this.#last !== undefined) this.send(this.#last, this.peer);
      this.#scheduleRetransmit(Math.min(interval * 2, this.timers.values.t2));
    }, interval);
  }

  #expire(ms: number): void {
    if (ms === 0) this.#terminate();
    else this.#expiry = this.timers.host.set(() => this.#terminate(), ms);
  }

  #terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.host.clear(this.#retransmit);
    this.timers.host.clear(this.#expiry);
    this.done(this);
  }
}

export type ClientOutcome = { response: SipResponse } | { timeout: true };

/**
 * A client transaction (RFC 3261 §17.1). INVITE: Timer A retransmits (T1 doubling, unreliable
 * only) until a response; Timer B (64*T1) times it out; a non-2xx final is ACKed here and absorbed
 * for Timer D. Non-INVITE: Timer E retransmits (T1 doubling to T2), Timer F (64*T1) times it out,
 * and Timer K (T4) absorbs response retransmissions.
 */
export class ClientTransaction extends Transaction {
  state: State = 'trying';
  readonly #bytes: Buffer;
  readonly #onOutcome: (outcome: ClientOutcome) => void;
  #retransmit: unknown;
  #timeout: unknown;

  constructor(parts: TransactionParts, onOutcome: (outcome: ClientOutcome) => void) {
    super(parts);
    this.#onOutcome = onOutcome;
    this.#bytes = serialise(parts.request);
    this.send(this.#bytes, parts.peer);
    const { t1 } = parts.timers.values;
    if (parts.peer.protocol === 'udp') this.#scheduleRetransmit(t1);
    this.#timeout = parts.timers.host.set(() => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      this.#terminate();
      this.#onOutcome({ timeout: true });
    }, 64 * t1);
  }

  receive(response: SipResponse): void {
    if (this.state === 'completed') {
      // A retransmitted final: an INVITE's ACK goes out again.
      if (this.request.method === 'INVITE' && response.status >= 300)
        this.send(serialise(this.#ack(response)), this.peer);
      return;
    }
    if (this.state === 'terminated') return;
    if (response.status < 200) {
      this.state = 'proceeding';
      if (this.request.method === 'INVITE') this.timers.host.clear(this.#retransmit);
      this.#onOutcome({ response });
      return;
    }
    this.timers.host.clear(this.#retransmit);
    this.timers.host.clear(this.#timeout);
    const reliable = this.peer.protocol !== 'udp';
    if (this.request.method === 'INVITE' && response.status < 300) {
      this.#terminate();
    } else {
      if (this.request.method === 'INVITE') this.send(serialise(this.#ack(response)), this.peer);
      this.state = 'completed';
      const linger = reliable
        ? 0
        : this.request.method === 'INVITE'
          ? 64 * this.timers.values.t1
          : this.timers.values.t4;
      if (linger === 0) this.#terminate();
      else this.#timeout = this.timers.host.set(() => this.#terminate(), linger);
    }
    this.#onOutcome({ response });
  }

  abandon(): void {
    this.#terminate();
  }

  #ack(response: SipResponse): SipRequest {
    const via = header(this.request, 'via') ?? '';
    const seq = cseq(this.request)?.seq ?? 1;
    return {
      kind: 'request',
      method: 'ACK',
      uri: this.request.uri,
      headers: [
        ['via', via],
        ['max-forwards', '70'],
        ['from', header(this.request, 'from') ?? ''],
        ['to', header(response, 'to') ?? ''],
        ['call-id', header(this.request, 'call-id') ?? ''],
        ['cseq', `${seq} ACK`],
      ],
      body: '',
    };
  }

  #scheduleRetransmit(interval: number): void {
    this.#retransmit = this.timers.host.set(() => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      if (this.request.method === 'INVITE' && this.state === 'proceeding') return;
      this.send(this.#bytes, this.peer);
      const next = this.request.method === 'INVITE' ? interval * 2 : Math.min(interval * 2, this.timers.values.t2);
      this.#scheduleRetransmit(this.state === 'proceeding' ? this.timers.values.t2 : next);
    }, interval);
  }

  #terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.host.clear(this.#retransmit);
    this.timers.host.clear(this.#timeout);
    this.done(this);
  }
}

export interface TransactionLayerOptions {
  send: SendSip;
  timers?: TimerHost;
  values?: Partial<SipTimerValues>;
  /** Server and client transactions held at once; past it new requests get 503. Default 20,000. */
  maxTransactions?: number;
  /** A new request with its server transaction (ACKs for 2xx and CANCELs come here too). */
  onRequest(request: SipRequest, tx: ServerTransaction | undefined, peer: SipPeer): void;
  /** A response no client transaction holds: a retransmitted 2xx to our INVITE, which the dialog ACKs again. */
  onStrayResponse?(response: SipResponse, peer: SipPeer): void;
}

/**
 * Matches messages to transactions (RFC 3261 §17.1.3, §17.2.3: top Via branch plus method, ACK
 * matching its INVITE), absorbs retransmissions, and creates new server transactions. The number
 * of transactions is bounded; each lives at most 64*T1 after its final response.
 */
export class TransactionLayer {
  readonly #server = new Map<string, ServerTransaction>();
  readonly #client = new Map<string, ClientTransaction>();
  readonly #timers: Timers;
  readonly #options: TransactionLayerOptions;
  readonly #max: number;

  constructor(options: TransactionLayerOptions) {
    this.#options = options;
    this.#timers = { host: options.timers ?? systemTimers, values: { ...DEFAULT_TIMER_VALUES, ...options.values } };
    this.#max = options.maxTransactions ?? 20_000;
  }

  get size(): number {
    return this.#server.size + this.#client.size;
  }

  get values(): SipTimerValues {
    return this.#timers.values;
  }

  get timers(): TimerHost {
    return this.#timers.host;
  }

  /** The INVITE server transaction a CANCEL (same branch) refers to. */
  inviteFor(request: SipRequest): ServerTransaction | undefined {
    return this.#server.get(serverKey(request, 'INVITE'));
  }

  receive(message: SipMessage, peer: SipPeer): void {
    if (message.kind === 'response') {
      const branch = topVia(message)?.branch;
      const tx = this.#client.get(`${branch}|${cseq(message)?.method}`);
      if (tx !== undefined) tx.receive(message);
      else this.#options.onStrayResponse?.(message, peer);
      return;
    }
    if (message.method === 'ACK') {
      const invite = this.#server.get(serverKey(message, 'INVITE'));
      if (invite !== undefined && invite.state !== 'accepted') invite.acked();
      else this.#options.onRequest(message, undefined, peer);
      return;
    }
    const key = serverKey(message, message.method);
    const existing = this.#server.get(key);
    if (existing !== undefined) {
      existing.retransmitted();
      return;
    }
    if (this.size >= this.#max) {
      this.#options.onRequest(message, undefined, peer);
      return;
    }
    const tx = new ServerTransaction({
      request: message,
      peer,
      key,
      timers: this.#timers,
      send: this.#options.send,
      done: (done) => {
        if (this.#server.get(done.key) === done) this.#server.delete(done.key);
      },
    });
    this.#server.set(key, tx);
    this.#options.onRequest(message, tx, peer);
  }

  /** Sends a request in a new client transaction; `onOutcome` gets each response or the timeout. */
  request(request: SipRequest, peer: SipPeer, onOutcome: (outcome: ClientOutcome) => void): ClientTransaction {
    const key = `${topVia(request)?.branch}|${request.method}`;
    const tx = new ClientTransaction(
      {
        request,
        peer,
        key,
        timers: this.#timers,
        send: this.#options.send,
        done: (done) => {
          if (this.#client.get(done.key) === done) this.#client.delete(done.key);
        },
      },
      onOutcome,
    );
    if (tx.state !== 'terminated') this.#client.set(key, tx);
    return tx;
  }

  close(): void {
    for (const tx of [...this.#server.values()]) tx.abandon();
    for (const tx of [...this.#client.values()]) tx.abandon();
  }
}

/** RFC 3261 branch (magic cookie) plus sent-by; an RFC 2543 peer without one falls back to Call-ID and CSeq. */
function serverKey(request: SipRequest, method: string): string {
  const via = topVia(request);
  const branch = via?.branch;
  if (branch?.startsWith('z9hG4bK')) return `${branch}|${via?.host}:${via?.port ?? ''}|${method}`;
  return `${header(request, 'call-id')}|${cseq(request)?.seq}|${header(request, 'from')}|${method}`;
}
