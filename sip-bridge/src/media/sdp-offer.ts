import { audioSdp, G711_PAYLOAD_TYPES, type Law } from './sdp.ts';

/** The telephone-event payload type the bridge offers (RFC 4733; 101 is what most phones use). */
export const OFFERED_DTMF_PAYLOAD = 101;

/**
 * The bridge's SDP offer for an outbound call (RFC 3264 §5): one audio stream, the one G.711 law
 * the call's session was opened with (the answerer must pick from what is offered, so the codec
 * is known before the far end answers), telephone-event 0-15, 20 ms packets, sendrecv.
 */
export function offerSdp(local: { address: string; port: number; law: Law; sessionId: number }): string {
  return audioSdp(
    { address: local.address, port: local.port, sessionId: local.sessionId, version: 1 },
    {
      law: local.law,
      payload: G711_PAYLOAD_TYPES[local.law],
      dtmfPayload: OFFERED_DTMF_PAYLOAD,
      direction: 'sendrecv',
    },
  );
}
