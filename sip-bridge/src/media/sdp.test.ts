import { describe, expect, it } from 'vitest';
import { answerSdp, readOffer } from './sdp.ts';

const offer = (media: string, extra = '') =>
  `v=0\r\no=user1 53655765 2353687637 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n${media}\r\n${extra}`;

describe('SDP offer/answer', () => {
  it('takes the offerer’s first G.711 codec and telephone-event, and answers with them', () => {
    const read = readOffer(
      offer(
        'm=audio 6000 RTP/AVP 8 0 101',
        'a=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\n',
      ),
    );
    expect(read).toMatchObject({ address: '127.0.0.1', port: 6000, law: 'pcma', payloadType: 8, dtmfPayloadType: 101 });
    if ('error' in read) return;
    const answer = answerSdp(read, { address: '127.0.0.1', port: 7000, sessionId: 1, version: 1 });
    expect(answer).toContain('m=audio 7000 RTP/AVP 8 101');
    expect(answer).toContain('a=rtpmap:101 telephone-event/8000');
    expect(answer).toContain('a=sendrecv');
  });

  it('sees hold in sendonly, inactive and c=0.0.0.0, and mirrors the direction', () => {
    const held = readOffer(offer('m=audio 6000 RTP/AVP 0', 'a=sendonly\r\n'));
    expect(held).toMatchObject({ held: true, direction: 'sendonly', law: 'pcmu' });
    if (!('error' in held))
      expect(answerSdp(held, { address: '127.0.0.1', port: 1, sessionId: 1, version: 2 })).toContain('a=recvonly');
    expect(readOffer(offer('m=audio 6000 RTP/AVP 0', 'a=inactive\r\n'))).toMatchObject({ held: true });
    expect(readOffer(offer('m=audio 6000 RTP/AVP 0').replace('c=IN IP4 127.0.0.1', 'c=IN IP4 0.0.0.0'))).toMatchObject({
      held: true,
    });
    expect(readOffer(offer('m=audio 6000 RTP/AVP 0'))).toMatchObject({ held: false, direction: 'sendrecv' });
  });

  it('refuses offers without G.711, without audio, or unreadable', () => {
    expect(readOffer(offer('m=audio 6000 RTP/AVP 96', 'a=rtpmap:96 opus/48000/2\r\n'))).toEqual({
      error: 'neither PCMU nor PCMA offered',
    });
    expect(readOffer(offer('m=video 6000 RTP/AVP 96'))).toEqual({ error: 'no RTP/AVP audio stream offered' });
    expect(readOffer('')).toEqual({ error: 'no SDP offer' });
    expect('error' in readOffer('garbage')).toBe(true);
    for (const address of ['999.1.2.3.4.5', '1.2.3', '256.0.0.1'])
      expect(readOffer(offer('m=audio 6000 RTP/AVP 0').replace('c=IN IP4 127.0.0.1', `c=IN IP4 ${address}`))).toEqual({
        error: 'no IPv4 connection address',
      });
  });
});
