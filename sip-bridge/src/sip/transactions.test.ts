import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../testing/fake-timers.ts';
import { parseMessage, responseTo, type SipMessage, type SipRequest } from './message.ts';
import { type ServerTransaction, type SipPeer, TransactionLayer } from './transactions.ts';

const udp: SipPeer = { protocol: 'udp', address: '127.0.0.1', port: 5071 };
const tcp: SipPeer = { protocol: 'tcp', address: '127.0.0.1', port: 5071, connection: 1 };

function request(method: string, branch = 'z9hG4bK-1', seq = 1): SipRequest {
  const text =
    `${method} sip:1000@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5071;branch=${branch}\r\n` +
    `From: <sip:a@h>;tag=f\r\nTo: <sip:1000@h>\r\nCall-ID: c1\r\nCSeq: ${seq} ${method}\r\n\r\n`;
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok || parsed.message.kind !== 'request') throw new Error('bad fixture');
  return parsed.message;
}

function setup() {
  const timers = new FakeTimers();
  const sent: SipMessage[] = [];
  const requests: SipRequest[] = [];
  const layer = new TransactionLayer({
    timers,
    send: (bytes) => {
      const parsed = parseMessage(bytes);
      if (parsed.ok) sent.push(parsed.message);
    },
    onRequest: (r) => requests.push(r),
  });
  return { timers, sent, requests, layer };
}

const statuses = (sent: SipMessage[]) => sent.map((m) => (m.kind === 'response' ? m.status : m.method));

describe('server transactions', () => {
  it('INVITE non-2xx: Timer G retransmits doubling to T2 until Timer H (32 s), then the state is gone', () => {
    const { timers, sent, requests, layer } = setup();
    layer.receive(request('INVITE'), udp);
    expect(requests).toHaveLength(1);
    const tx = layer.inviteFor(request('INVITE'))!;
    tx.respond(responseTo(request('INVITE'), 486, 'Busy Here', { toTag: 't' }));
    const times: number[] = [];
    const count = () => sent.length;
    let seen = count();
    for (let t = 0; t < 40_000; t += 100) {
      timers.advance(100);
      if (count() > seen) times.push(timers.now);
      seen = count();
    }
    expect(times.slice(0, 5)).toEqual([500, 1500, 3500, 7500, 11_500]);
    expect(times.every((t) => t < 32_000)).toBe(true);
    expect(tx.state).toBe('terminated');
    expect(layer.size).toBe(0);
  });

  it('INVITE non-2xx: the ACK stops retransmission; Timer I absorbs ACK copies', () => {
    const { timers, sent, layer } = setup();
    layer.receive(request('INVITE'), udp);
    const tx = layer.inviteFor(request('INVITE'))!;
    tx.respond(responseTo(request('INVITE'), 487, 'Request Terminated', { toTag: 't' }));
    layer.receive(request('ACK'), udp);
    expect(tx.state).toBe('confirmed');
    timers.advance(4000);
    expect(statuses(sent)).toEqual([487]);
    timers.advance(2000);
    expect(tx.state).toBe('terminated');
  });

  it('a retransmitted request gets the last response again, without reaching the core twice', () => {
    const { sent, requests, layer } = setup();
    layer.receive(request('INVITE'), udp);
    layer.inviteFor(request('INVITE'))!.respond(responseTo(request('INVITE'), 100, 'Trying'));
    layer.receive(request('INVITE'), udp);
    expect(requests).toHaveLength(1);
    expect(statuses(sent)).toEqual([100, 100]);
  });

  it('INVITE 2xx is retransmitted until the dialog ACKs it, and reports a missing ACK after 64*T1', () => {
    const { timers, sent, layer } = setup();
    layer.receive(request('INVITE'), udp);
    const tx = layer.inviteFor(request('INVITE'))!;
    let noAck = 0;
    tx.onNoAck = () => noAck++;
    tx.respond(responseTo(request('INVITE'), 200, 'OK', { toTag: 't' }));
    timers.advance(1600);
    expect(statuses(sent)).toEqual([200, 200, 200]);
    timers.advance(40_000);
    expect(noAck).toBe(1);

    const second = setup();
    second.layer.receive(request('INVITE'), udp);
    const acked = second.layer.inviteFor(request('INVITE'))!;
    acked.onNoAck = () => noAck++;
    acked.respond(responseTo(request('INVITE'), 200, 'OK', { toTag: 't' }));
    acked.acked();
    second.timers.advance(40_000);
    expect(statuses(second.sent)).toEqual([200]);
    expect(noAck).toBe(1);
  });

  it('non-INVITE: Timer J keeps the state 64*T1 on UDP and none on TCP', () => {
    const timers = new FakeTimers();
    let held: ServerTransaction | undefined;
    const layer = new TransactionLayer({ timers, send: () => {}, onRequest: (_r, tx) => (held = tx) });
    const bye = request('BYE', 'z9hG4bK-b');
    layer.receive(bye, udp);
    held!.respond(responseTo(bye, 200, 'OK'));
    timers.advance(31_999);
    expect(layer.size).toBe(1);
    timers.advance(1);
    expect(layer.size).toBe(0);
    const overTcp = request('BYE', 'z9hG4bK-c');
    layer.receive(overTcp, tcp);
    held!.respond(responseTo(overTcp, 200, 'OK'));
    expect(layer.size).toBe(0);
  });
});

describe('client transactions', () => {
  it('non-INVITE: Timer E retransmits (T1 doubling, capped at T2) and Timer F times out at 64*T1', () => {
    const { timers, sent, layer } = setup();
    const outcomes: string[] = [];
    layer.request(request('BYE', 'z9hG4bK-out'), udp, (o) => outcomes.push('timeout' in o ? 'timeout' : 'response'));
    timers.advance(31_000);
    // 0, 0.5, 1.5, 3.5, 7.5, 11.5, 15.5, ... every 4 s.
    expect(sent.length).toBe(1 + 4 + Math.floor((31_000 - 7500) / 4000));
    expect(outcomes).toEqual([]);
    timers.advance(1000);
    expect(outcomes).toEqual(['timeout']);
    expect(layer.size).toBe(0);
  });

  it('non-INVITE: a final response ends retransmission; Timer K absorbs copies', () => {
    const { timers, sent, layer } = setup();
    const outcomes: number[] = [];
    const bye = request('BYE', 'z9hG4bK-out');
    layer.request(bye, udp, (o) => outcomes.push('response' in o ? o.response.status : 0));
    layer.receive(responseTo(bye, 200, 'OK'), udp);
    layer.receive(responseTo(bye, 200, 'OK'), udp);
    timers.advance(10_000);
    expect(sent).toHaveLength(1);
    expect(outcomes).toEqual([200]);
    expect(layer.size).toBe(0);
  });

  it('INVITE: Timer A doubles until a provisional, Timer B times out; a non-2xx is ACKed', () => {
    const { timers, sent, layer } = setup();
    const outcomes: string[] = [];
    const inv = request('INVITE', 'z9hG4bK-inv');
    layer.request(inv, udp, (o) => outcomes.push('timeout' in o ? 'timeout' : String(o.response.status)));
    timers.advance(3500);
    expect(sent).toHaveLength(4); // 0, 500, 1500, 3500
    timers.advance(29_000);
    expect(outcomes).toEqual(['timeout']);

    const other = setup();
    other.layer.request(inv, udp, (o) => outcomes.push('timeout' in o ? 'timeout' : String(o.response.status)));
    other.layer.receive(responseTo(inv, 180, 'Ringing', { toTag: 'r' }), udp);
    other.timers.advance(10_000);
    expect(other.sent).toHaveLength(1);
    other.layer.receive(responseTo(inv, 486, 'Busy Here', { toTag: 'r' }), udp);
    expect(statuses(other.sent)).toEqual(['INVITE', 'ACK']);
    expect(outcomes).toEqual(['timeout', '180', '486']);
  });
});
