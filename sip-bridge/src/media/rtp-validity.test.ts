import { describe, expect, it } from 'vitest';
import { RtpHeader, RtpPacket } from 'werift';
import { readRtp, rtpProblem } from './rtp-validity.ts';

const packet = (first: number, rest: number[] = [], payload = 160) =>
  Uint8Array.from([first, 0, 0, 1, 0, 0, 0, 160, 0, 0, 0x12, 0x34, ...rest, ...new Array(payload).fill(0xff)]);

describe('RTP validity checks', () => {
  it('accepts plain packets, and CSRCs, extensions and padding that fit', () => {
    expect(rtpProblem(packet(0x80))).toBeUndefined();
    expect(rtpProblem(packet(0x82, [0, 0, 0, 1, 0, 0, 0, 2]))).toBeUndefined();
    expect(rtpProblem(packet(0x90, [0xbe, 0xde, 0, 1, 0x10, 0xaa, 0, 0]))).toBeUndefined();
    const padded = packet(0xa0);
    padded[padded.length - 1] = 4;
    expect(rtpProblem(padded)).toBeUndefined();
  });

  it('refuses short packets, other versions, and lengths that run past the packet', () => {
    expect(rtpProblem(new Uint8Array(11))).toBe('shorter than an RTP header');
    expect(rtpProblem(packet(0x40))).toBe('not RTP version 2');
    expect(rtpProblem(packet(0x8f, [], 8))).toBe('CSRC list past the packet');
    expect(rtpProblem(packet(0x90, [0xbe, 0xde, 0xff, 0xff], 20))).toBe('header extension past the packet');
    expect(rtpProblem(packet(0x90, [0xbe], 0))).toBe('header extension past the packet');
    const padded = packet(0xa0, [], 10);
    padded[padded.length - 1] = 200;
    expect(rtpProblem(padded)).toBe('padding past the payload');
  });

  it('reads the same fields as werift’s parser, past CSRCs and extensions and without padding', () => {
    const payload = Buffer.from(Array.from({ length: 160 }, (_, i) => i));
    const plain = new RtpPacket(
      new RtpHeader({ payloadType: 8, sequenceNumber: 65_535, timestamp: 4_294_967_000, ssrc: 7, marker: true }),
      payload,
    ).serialize();
    const csrcs = packet(0x82, [0, 0, 0, 1, 0, 0, 0, 2]);
    const extended = packet(0x90, [0xbe, 0xde, 0, 1, 0x10, 0xaa, 0, 0]);
    const padded = packet(0xa0);
    padded[padded.length - 1] = 4;
    for (const bytes of [plain, csrcs, extended, padded]) {
      const read = readRtp(bytes);
      if ('problem' in read) throw new Error(read.problem);
      const werift = RtpPacket.deSerialize(Buffer.from(bytes));
      const { payload: bytesRead, ...header } = read.packet;
      expect(header).toEqual({
        payloadType: werift.header.payloadType,
        sequenceNumber: werift.header.sequenceNumber,
        timestamp: werift.header.timestamp,
      });
      expect([...bytesRead]).toEqual([...werift.payload]);
    }
    expect(readRtp(padded)).toMatchObject({ packet: { payload: { length: 156 } } });
  });
});
