import { write } from 'sdp-transform';
import { G711_PAYLOAD_TYPES, type Law } from './sdp.ts';

/** The telephone-event payload type the bridge offers (RFC 4733; 101 is what most phones use). */
export const OFFERED_DTMF_PAYLOAD = 101;

/**
 * The bridge's SDP offer for an outbound call (RFC 3264 §5): one audio stream, the one G.711 law
 * the call's session was opened with (the answerer must pick from what is offered, so the codec
 * is known before the far end answers), telephone-event 0-15, 20 ms packets, sendrecv.
 */
export function offerSdp(local: { address: string; port: number; law: Law; sessionId: number }): string {
  const payload = G711_PAYLOAD_TYPES[local.law];
  return write({
    version: 0,
    origin: {
      username: 'venus',
      sessionId: local.sessionId,
      sessionVersion: 1,
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
        payloads: `${payload} ${OFFERED_DTMF_PAYLOAD}`,
        rtp: [
          { payload, codec: local.law.toUpperCase(), rate: 8000 },
          { payload: OFFERED_DTMF_PAYLOAD, codec: 'telephone-event', rate: 8000 },
        ],
        fmtp: [{ payload: OFFERED_DTMF_PAYLOAD, config: '0-15' }],
        ptime: 20,
        direction: 'sendrecv',
      },
    ],
  });
}
