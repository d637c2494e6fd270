import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeUnderTest } from './support/sip-bridge-process.ts';
import { rtpCase, type SipFuzzCase, SipFuzzer } from './support/sip-fuzz-cases.ts';
import { SipUac } from './support/sip-uac.ts';
import { runSipp } from './support/sipp.ts';
import { until } from './support/until.ts';

/**
 * Fuzzing the SIP bridge process: 8,000 mutated SIP messages over UDP and 2,500 over TCP (each on
 * its own connection), and 10,500 lying RTP packets at a call in progress, from a seeded generator
 * (VENUS_FUZZ_SEED to replay one; the seed is printed). The bridge must not crash, its memory stays
 * under {@link RSS_BOUND_BYTES}, every request that can be answered gets the answer it is owed
 * (400-class for the malformed ones), no INVITE opens a call, and a real SIPp call placed during the
 * barrage completes.
 */
const SEED = Number(process.env.VENUS_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const UDP_CASES = 8000;
const TCP_CASES = 2500;
/**
 * Generous bound on the bridge's resident memory: it idles at ~150-250 MiB (Node, tsx, pino); the
 * bounded tables (20,000 transactions, 1,024 connections, 500 calls) cannot take it past this.
 */
const RSS_BOUND_BYTES = 768 * 1024 * 1024;
const WAIT_MS = 120_000;

let bridge: BridgeUnderTest;

beforeAll(async () => {
  bridge = await BridgeUnderTest.start({
    trunks: [{ name: 'carrier', username: 'trunk', password: 's3cret' }],
    routes: [
      { number: 'fuzz', tenant: 'default', trunk: 'carrier' },
      { number: 'sdp', tenant: 'default' },
      { number: 'call', tenant: 'default' },
      { number: 'rtp', tenant: 'default' },
    ],
  });
});

afterAll(async () => {
  await bridge?.close();
});

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) * 1024;
}

/** The status and top Via branch of each SIP response in `text`. */
function responses(text: string): { status: number; branch: string; raw: string }[] {
  return text.split(/(?=SIP\/2\.0 \d{3} )/).flatMap((raw) => {
    const status = /^SIP\/2\.0 (\d{3}) /.exec(raw)?.[1];
    const branch = /^Via: [^\r\n;]*;branch=([^;\r\n]+)/im.exec(raw)?.[1];
    return status && branch ? [{ status: Number(status), branch, raw }] : [];
  });
}

/** ACK for a non-2xx final answer to an INVITE (RFC 3261 §17.1.1.3), from the answer's own headers. */
function ackFor(raw: string, bridgeTarget: string): Buffer {
  const get = (name: string) => new RegExp(`^${name}: ([^\\r\\n]*)`, 'im').exec(raw)?.[1] ?? '';
  const seq = get('CSeq').split(' ')[0];
  return Buffer.from(
    `ACK sip:fuzz@${bridgeTarget} SIP/2.0\r\nVia: ${get('Via')}\r\nFrom: ${get('From')}\r\nTo: ${get('To')}\r\n` +
      `Call-ID: ${get('Call-ID')}\r\nCSeq: ${seq} ACK\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`,
  );
}

function probe(local: string, branch: string): Buffer {
  return Buffer.from(
    `OPTIONS sip:fuzz@${bridge.target} SIP/2.0\r\nVia: SIP/2.0/UDP ${local};branch=${branch}\r\n` +
      `From: <sip:p@${local}>;tag=p\r\nTo: <sip:fuzz@${bridge.target}>\r\nCall-ID: ${branch}\r\nCSeq: 1 OPTIONS\r\n` +
      'Content-Length: 0\r\n\r\n',
  );
}

/** One case over its own TCP connection: written, half-closed, and whatever came back before the close. */
function overTcp(bytes: Buffer): Promise<string> {
  const [host, port] = bridge.target.split(':') as [string, string];
  return new Promise((resolve) => {
    const socket = connect(Number(port), host);
    let text = '';
    socket.on('connect', () => socket.end(bytes));
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
}

interface Outcome {
  c: SipFuzzCase;
  transport: 'UDP' | 'TCP';
  status?: number;
}

/** What the bridge owed each case and did not give, in brief. */
function violations(outcomes: Outcome[]): string[] {
  const out: string[] = [];
  for (const { c, transport, status } of outcomes) {
    const due = transport === 'TCP' && c.streamDue === false ? 'none' : c.due;
    const bad =
      (c.method === 'INVITE' && status !== undefined && status >= 200 && status < 300) ||
      (due === 'malformed' && (status === undefined || status < 400 || status > 499)) ||
      (due === 'valid' && (status === undefined || !(c.statuses ?? []).includes(status)));
    if (bad) out.push(`${transport} ${c.kind} ${c.method} (${due}): ${status ?? 'no answer'}`);
  }
  return out;
}

describe('SIP bridge under fuzzing', () => {
  it('malformed SIP over UDP and TCP and lying RTP: no crash, bounded memory, owed answers, a call completes', {
    timeout: 900_000,
  }, async () => {
    console.log(`SIP fuzz seed ${SEED} (VENUS_FUZZ_SEED=${SEED} replays it)`);
    const fuzzer = new SipFuzzer(SEED);
    let maxRss = rssBytes(bridge.pid);
    const sampler = setInterval(() => {
      if (bridge.exit === undefined) maxRss = Math.max(maxRss, rssBytes(bridge.pid));
    }, 100);
    const sip = createSocket('udp4');
    const rtp = createSocket('udp4');
    await new Promise<void>((r) => sip.bind(0, '127.0.0.1', r));
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
    const [host, port] = bridge.target.split(':') as [string, string];
    try {
      const call = new SipUac(sip, bridge.target, `rtp-call-${SEED}`);
      await call.invite('rtp', rtp.address().port);
      const rtpState = { seq: 1000, ts: 5000, ssrc: 0x1234 };
      let rtpSent = 0;
      const sendRtp = () => {
        rtp.send(rtpCase(fuzzer, rtpState).bytes, call.mediaPort, '127.0.0.1');
        rtpSent += 1;
      };
      // A real call placed while the barrage runs.
      const sipp = runSipp(bridge.target, ['-sn', 'uac', '-s', 'call', '-d', '3000'], bridge.dir);

      // UDP: answers matched to cases by their Via branch; non-2xx answers to INVITEs are ACKed.
      // Every 32 cases an OPTIONS probe: the bridge reads a socket in order, so once the probe is
      // answered every case before it has been handled (and the socket buffers never overflow).
      const udp = new Map<string, Outcome>();
      const probes = new Set<string>();
      sip.on('message', (m) => {
        for (const r of responses(m.toString('latin1'))) {
          if (probes.delete(r.branch)) continue;
          const o = udp.get(r.branch);
          if (o === undefined || r.status < 200) continue;
          if (o.c.method === 'INVITE' && r.status >= 300) sip.send(ackFor(r.raw, bridge.target), Number(port), host);
          o.status ??= r.status;
        }
      });
      const local = `127.0.0.1:${sip.address().port}`;
      for (let i = 0; i < UDP_CASES; i++) {
        const c = fuzzer.next({ bridge: bridge.target, local, transport: 'UDP' });
        udp.set(c.branch, { c, transport: 'UDP' });
        sip.send(c.bytes, Number(port), host);
        sendRtp();
        if (i % 32 === 31 || i === UDP_CASES - 1) {
          const branch = `z9hG4bK-probe-${i}`;
          probes.add(branch);
          sip.send(probe(local, branch), Number(port), host);
          await until(`the probe after UDP case ${i} (seed ${SEED})`, () => !probes.has(branch), WAIT_MS).catch(
            (error: unknown) => {
              const recent = [...udp.values()].slice(-32).map((o) => `${o.c.kind} ${o.c.method}`);
              throw new Error(
                `${error}; cases since the last probe: ${recent.join(', ')}; bridge: ${bridge.output.slice(-2000)}`,
              );
            },
          );
        }
      }

      // TCP: each case on a connection of its own, a few at once.
      const tcp: Outcome[] = [];
      const tcpLocal = '127.0.0.1:5999';
      for (let i = 0; i < TCP_CASES; i += 8) {
        const batch = Array.from({ length: Math.min(8, TCP_CASES - i) }, () =>
          fuzzer.next({ bridge: bridge.target, local: tcpLocal, transport: 'TCP' }),
        );
        const texts = await Promise.all(batch.map((c) => overTcp(c.bytes)));
        batch.forEach((c, k) => {
          const final = responses(texts[k]!).find((r) => r.branch === c.branch && r.status >= 200);
          tcp.push({ c, transport: 'TCP', ...(final ? { status: final.status } : {}) });
        });
        for (let k = 0; k < 8; k++) sendRtp();
      }

      const sippRun = await sipp;
      const byeStatus = await call.bye();
      clearInterval(sampler);
      maxRss = Math.max(maxRss, rssBytes(bridge.pid));

      const outcomes = [...udp.values(), ...tcp];
      const kinds = new Map<string, number>();
      for (const o of outcomes) kinds.set(o.c.kind, (kinds.get(o.c.kind) ?? 0) + 1);
      console.log(
        `SIP fuzz: ${outcomes.length} SIP messages (${UDP_CASES} UDP, ${TCP_CASES} TCP), ${rtpSent} RTP packets; ` +
          `bridge RSS peak ${(maxRss / 2 ** 20).toFixed(0)} MiB; ` +
          `${outcomes.filter((o) => o.status !== undefined).length} answered; kinds ${JSON.stringify(Object.fromEntries(kinds))}`,
      );
      expect(bridge.exit).toBeUndefined();
      const wrong = violations(outcomes);
      expect(wrong.slice(0, 30), `seed ${SEED}: ${wrong.length} cases not answered as owed`).toEqual([]);
      expect(outcomes.length).toBeGreaterThanOrEqual(10_000);
      expect(rtpSent).toBeGreaterThanOrEqual(10_000);
      expect(maxRss).toBeLessThan(RSS_BOUND_BYTES);
      expect(sippRun.code, sippRun.output).toBe(0);
      expect(byeStatus).toBe(200);
      // The RTP call was a session all along, and the well-formed packets reached it as audio.
      const events = await bridge.closedTimeline(bridge.sessionsFor('rtp')[0]!);
      expect(events.some((e) => e.type === 'user.audio')).toBe(true);
      await bridge.closedTimeline(bridge.sessionsFor('call')[0]!);
    } finally {
      clearInterval(sampler);
      sip.close();
      rtp.close();
    }
  });
});
