import { VenusError } from '@venus/protocol';
import { RTCPeerConnection, RTCRtpCodecParameters } from 'werift';

export interface PeerOptions {
  /**
   * The one host address to gather ICE candidates on (e.g. '127.0.0.1' for an edge that serves only
   * this machine, or the server's public IPv4). Every IPv4 interface when undefined.
   */
  iceAddress?: string;
}

/** Opus at 48 kHz/2 is what every browser offers; it is the only codec the edge speaks over WebRTC. */
export const OPUS_CODEC = { mimeType: 'audio/opus', clockRate: 48_000, channels: 2 } as const;

/** A werift peer connection set up for one realtime call: Opus only, IPv4, on `iceAddress` when given. */
export function createPeerConnection(options: PeerOptions): RTCPeerConnection {
  const address = options.iceAddress;
  return new RTCPeerConnection({
    codecs: {
      audio: [new RTCRtpCodecParameters({ ...OPUS_CODEC, rtcpFeedback: [{ type: 'transport-cc' }] })],
      video: [],
    },
    iceUseIpv6: false,
    ...(address === undefined
      ? {}
      : {
          iceInterfaceAddresses: { udp4: address },
          iceAdditionalHostAddresses: [address],
          // werift gathers on every interface when `address` is loopback (its interface list omits
          // loopback): only pairs from `address` are checked, and only its candidates are answered.
          iceFilterCandidatePair: (pair) => pair.localCandidate.host === address,
        }),
  });
}

/**
 * Answers an SDP offer without trickle ICE (OpenAI's HTTP flow: one request, one answer), so the
 * answer carries its candidates: it resolves once gathering is complete. When the edge listens on
 * loopback only, the offer's other candidates cannot be reached from it and are dropped first.
 */
export async function answerOffer(
  pc: RTCPeerConnection,
  offerSdp: string,
  options: PeerOptions & { gatherTimeoutMs?: number },
): Promise<string> {
  const sdp = isLoopback(options.iceAddress) ? keepLoopbackCandidates(offerSdp) : offerSdp;
  try {
    await pc.setRemoteDescription({ type: 'offer', sdp });
  } catch (cause) {
    throw new VenusError('invalid_arguments', `the SDP offer was refused: ${messageOf(cause)}`, { cause });
  }
  if (!pc.getTransceivers().some((t) => t.kind === 'audio')) {
    throw new VenusError('invalid_arguments', 'the SDP offer has no audio section: a realtime call needs one');
  }
  // A transceiver the offer created answers recvonly by default: the assistant speaks on it too.
  for (const transceiver of pc.getTransceivers()) {
    if (transceiver.kind === 'audio') transceiver.setDirection('sendrecv');
  }
  const gathered = waitForGathering(pc, options.gatherTimeoutMs ?? 5000);
  await pc.setLocalDescription(await pc.createAnswer());
  await gathered;
  const answer = pc.localDescription?.sdp;
  if (answer === undefined) throw new VenusError('internal_error', 'no local description after answering');
  const address = options.iceAddress;
  return address === undefined ? answer : keepCandidates(answer, (host) => host === address);
}

function waitForGathering(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      subscription.unSubscribe();
      reject(new VenusError('internal_error', `ICE gathering did not complete in ${timeoutMs} ms`));
    }, timeoutMs);
    const subscription = pc.iceGatheringStateChange.subscribe((state) => {
      if (state !== 'complete') return;
      clearTimeout(timer);
      subscription.unSubscribe();
      resolve();
    });
  });
}

/**
 * Drops the offer's ICE candidates that are not loopback, when it has at least one loopback
 * candidate; otherwise returns the offer unchanged (a browser only offers loopback when allowed to,
 * and then pairs through the other addresses would only slow the checks down).
 */
export function keepLoopbackCandidates(sdp: string): string {
  return keepCandidates(sdp, (host) => /^127\./.test(host));
}

/** Keeps the `a=candidate` lines whose address passes `keep`, unless that would leave none. */
export function keepCandidates(sdp: string, keep: (host: string) => boolean): string {
  const lines = sdp.split(/\r?\n/);
  const kept = (line: string) => {
    if (!line.startsWith('a=candidate:')) return true;
    const host = line.split(' ')[4];
    return host !== undefined && keep(host);
  };
  if (!lines.some((line) => line.startsWith('a=candidate:') && kept(line))) return sdp;
  return lines.filter(kept).join('\r\n');
}

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && /^127\./.test(address);
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** The ICE address for an edge listening on `hostname`: that address when it is one IPv4 address, else every interface. */
export function iceAddressFor(hostname: string): string | undefined {
  if (hostname === 'localhost') return '127.0.0.1';
  return /^\d+\.\d+\.\d+\.\d+$/.test(hostname) && hostname !== '0.0.0.0' ? hostname : undefined;
}
