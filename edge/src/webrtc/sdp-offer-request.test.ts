import { describe, expect, it } from 'vitest';
import { iceAddressFor, keepCandidates, keepLoopbackCandidates } from './peer-connection.ts';
import { readOfferRequest } from './sdp-offer-request.ts';
import { stripAudioFormats } from './session-update-filter.ts';

const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=candidate:1 1 udp 2122194687 127.0.0.1 50000 typ host generation 0',
  'a=candidate:2 1 udp 2122063615 192.0.2.2 50001 typ host generation 0',
  'a=candidate:3 1 udp 2122267903 ::1 50002 typ host generation 0',
  'a=rtpmap:111 opus/48000/2',
  '',
].join('\r\n');

const post = (body: BodyInit, type?: string) =>
  new Request('http://edge/v1/realtime/calls', {
    method: 'POST',
    body,
    ...(type === undefined ? {} : { headers: { 'content-type': type } }),
  });

describe('readOfferRequest', () => {
  it('takes an application/sdp body as the offer', async () => {
    const offer = await readOfferRequest(post(OFFER, 'application/sdp'));
    expect(offer).toEqual({ ok: true, sdp: OFFER });
  });

  it('takes multipart sdp and session fields, less the audio formats', async () => {
    const form = new FormData();
    form.set('sdp', OFFER);
    form.set(
      'session',
      JSON.stringify({
        type: 'realtime',
        instructions: 'Be brief.',
        audio: { output: { voice: 'en-gb', format: { type: 'audio/pcmu' } } },
      }),
    );
    const offer = await readOfferRequest(post(form));
    expect(offer.ok).toBe(true);
    if (!offer.ok) return;
    expect(offer.sdp).toBe(OFFER);
    expect(offer.session).toMatchObject({ instructions: 'Be brief.', audio: { output: { voice: 'en-gb' } } });
    expect(offer.session?.audio?.output).not.toHaveProperty('format');
  });

  it('names what is wrong with a bad request', async () => {
    expect(await readOfferRequest(post('{}', 'application/json'))).toMatchObject({ ok: false, status: 415 });
    expect(await readOfferRequest(post('hello', 'application/sdp'))).toMatchObject({
      ok: false,
      status: 400,
      param: 'body',
    });
    const form = new FormData();
    form.set('sdp', OFFER);
    form.set('session', '{not json');
    expect(await readOfferRequest(post(form))).toMatchObject({ ok: false, status: 400, param: 'session' });
    const bad = new FormData();
    bad.set('sdp', OFFER);
    bad.set('session', JSON.stringify({ venus: { chunk_ms: 5 } }));
    const refused = await readOfferRequest(post(bad));
    expect(refused).toMatchObject({ ok: false, status: 400 });
    expect(refused.ok ? '' : refused.message).toContain('session.venus.chunk_ms');
  });
});

describe('ICE candidate filters', () => {
  it('keeps only loopback candidates when the offer has one', () => {
    const kept = keepLoopbackCandidates(OFFER);
    expect(kept.match(/a=candidate:/g)).toHaveLength(1);
    expect(kept).toContain(' 127.0.0.1 50000 ');
    expect(kept).toContain('a=rtpmap:111 opus/48000/2');
  });

  it('leaves an offer without the wanted candidates alone rather than empty it', () => {
    expect(keepCandidates(OFFER, (host) => host === '10.0.0.1')).toBe(OFFER);
  });

  it('gathers on the listening address when it is one IPv4 address', () => {
    expect(iceAddressFor('127.0.0.1')).toBe('127.0.0.1');
    expect(iceAddressFor('localhost')).toBe('127.0.0.1');
    expect(iceAddressFor('0.0.0.0')).toBeUndefined();
    expect(iceAddressFor('::')).toBeUndefined();
  });
});

describe('stripAudioFormats', () => {
  it('removes GA and beta format fields from a session.update and says so', () => {
    const out = stripAudioFormats(
      JSON.stringify({
        type: 'session.update',
        session: { voice: 'en', input_audio_format: 'g711_ulaw', audio: { input: { format: { type: 'audio/pcmu' } } } },
      }),
    );
    expect(JSON.parse(out.text)).toEqual({ type: 'session.update', session: { voice: 'en', audio: { input: {} } } });
    expect(out.notice).toContain('session.input_audio_format, session.audio.input.format');
  });

  it('passes everything else through untouched', () => {
    for (const text of [
      '{"type":"session.update","session":{"voice":"en"}}',
      '{"type":"response.create"}',
      'not json',
    ]) {
      expect(stripAudioFormats(text)).toEqual({ text });
    }
  });
});
