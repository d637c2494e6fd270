import { isIPv4 } from 'node:net';
import { parse, write } from 'sdp-transform';

/** The G.711 law of a leg, by its RTP name (the same names as the edge's telephony core). */
export type Law = 'pcmu' | 'pcma';
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What the bridge takes from an SDP offer (RFC 3264): where to send audio, in which codec. */
export interface MediaOffer {
  address: string;
  port: number;
  law: Law;
  payloadType: number;
  /** telephone-event (RFC 4733) payload type, when offered at 8 kHz. */
  dtmfPayloadType: number | undefined;
  direction: Direction;
  /** The caller put the call on hold: sendonly or inactive, or the old c=0.0.0.0 form (RFC 2543). */
  held: boolean;
}

const STATIC: Record<number, Law> = { 0: 'pcmu', 8: 'pcma' };
const NAMES: Record<string, Law> = { PCMU: 'pcmu', PCMA: 'pcma' };
const PAYLOAD: Record<Law, number> = { pcmu: 0, pcma: 8 };
const MAX_SDP_BYTES = 16 * 1024;

/**
 * Reads an offer with sdp-transform: the first audio stream, its first G.711 payload in the
 * offerer's order of preference, telephone-event, and direction. An offer the bridge cannot
 * answer gives a reason (the UA answers 488 Not Acceptable Here).
 */
export function readOffer(sdp: string): MediaOffer | { error: string } {
  if (sdp.length === 0) return { error: 'no SDP offer' };
  if (sdp.length > MAX_SDP_BYTES) return { error: 'SDP too large' };
  let session: ReturnType<typeof parse>;
  try {
    session = parse(sdp);
  } catch {
    return { error: 'unreadable SDP' };
  }
  const audio = session.media?.find((m) => m.type === 'audio' && m.port > 0 && /RTP\/AVP/.test(m.protocol));
  if (audio === undefined) return { error: 'no RTP/AVP audio stream offered' };
  const address = audio.connection?.ip ?? session.connection?.ip;
  if (address === undefined || !isIPv4(address)) return { error: 'no IPv4 connection address' };
  if (!Number.isInteger(audio.port) || audio.port > 65_535) return { error: 'bad media port' };
  const types = String(audio.payloads ?? '')
    .split(/\s+/)
    .filter((p) => /^\d{1,3}$/.test(p))
    .map(Number);
  const rtpmap = new Map((audio.rtp ?? []).map((r) => [r.payload, r]));
  let law: Law | undefined;
  let payloadType = -1;
  for (const pt of types) {
    const map = rtpmap.get(pt);
    const named = map === undefined ? STATIC[pt] : map.rate === 8000 ? NAMES[map.codec.toUpperCase()] : undefined;
    if (named !== undefined) {
      law = named;
      payloadType = pt;
      break;
    }
  }
  if (law === undefined) return { error: 'neither PCMU nor PCMA offered' };
  const dtmf = types.find((pt) => {
    const map = rtpmap.get(pt);
    return map !== undefined && map.codec.toLowerCase() === 'telephone-event' && map.rate === 8000;
  });
  const direction = (audio.direction ?? session.direction ?? 'sendrecv') as Direction;
  return {
    address,
    port: audio.port,
    law,
    payloadType,
    dtmfPayloadType: dtmf,
    direction,
    held: direction === 'sendonly' || direction === 'inactive' || address === '0.0.0.0',
  };
}

const ANSWER_DIRECTION: Record<Direction, Direction> = {
  sendrecv: 'sendrecv',
  sendonly: 'recvonly',
  recvonly: 'sendonly',
  inactive: 'inactive',
};

/** The answer (RFC 3264 §6): the offer's codec and telephone-event, our address and port, the mirrored direction. */
export function answerSdp(
  offer: MediaOffer,
  local: { address: string; port: number; sessionId: number; version: number },
): string {
  const direction = offer.address === '0.0.0.0' ? 'recvonly' : ANSWER_DIRECTION[offer.direction];
  return audioSdp(local, { law: offer.law, payload: offer.payloadType, dtmfPayload: offer.dtmfPayloadType, direction });
}

/**
 * One G.711 audio stream (and telephone-event 0-15 when `dtmfPayload` is given) at our address and
 * port, 20 ms packets: the shape of every SDP the bridge writes, offer or answer.
 */
export function audioSdp(
  local: { address: string; port: number; sessionId: number; version: number },
  media: { law: Law; payload: number; dtmfPayload: number | undefined; direction: Direction },
): string {
  const payloads = [media.payload, ...(media.dtmfPayload === undefined ? [] : [media.dtmfPayload])];
  const rtp = [{ payload: media.payload, codec: media.law.toUpperCase(), rate: 8000 }];
  const fmtp: { payload: number; config: string }[] = [];
  if (media.dtmfPayload !== undefined) {
    rtp.push({ payload: media.dtmfPayload, codec: 'telephone-event', rate: 8000 });
    fmtp.push({ payload: media.dtmfPayload, config: '0-15' });
  }
  return write({
    version: 0,
    origin: {
      username: 'venus',
      sessionId: local.sessionId,
      sessionVersion: local.version,
      netType: 'IN',
      ipVer: 4,
      address: local.address,
    },
    name: 'Realtime-Venus',
    connection: { version: 4, ip: local.address },
    timing: { start: 0, stop: 0 },
    media: [
      {
        type: 'audio',
        port: local.port,
        protocol: 'RTP/AVP',
        payloads: payloads.join(' '),
        rtp,
        fmtp,
        ptime: 20,
        direction: media.direction,
      },
    ],
  });
}

export { PAYLOAD as G711_PAYLOAD_TYPES };
