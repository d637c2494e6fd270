/**
 * RFC 3550 §5.1 / Appendix A.1 validity checks on an inbound RTP packet before it is parsed:
 * version 2, and the CSRC list, header extension and padding the header claims all fit in the
 * datagram. werift's parser trusts these lengths: an extension length past the packet makes its
 * one-byte-extension loop read past the end (up to 262,140 times, copying its array each time),
 * which blocked the event loop for minutes in the fuzz test. A packet that fails here is refused.
 *
 * @returns undefined when the packet is well formed, else what is wrong with it.
 */
export function rtpProblem(bytes: Uint8Array): string | undefined {
  if (bytes.length < 12) return 'shorter than an RTP header';
  const first = bytes[0]!;
  if (first >> 6 !== 2) return 'not RTP version 2';
  let headerEnd = 12 + (first & 0x0f) * 4;
  if (headerEnd > bytes.length) return 'CSRC list past the packet';
  if ((first & 0x10) !== 0) {
    if (headerEnd + 4 > bytes.length) return 'header extension past the packet';
    const words = (bytes[headerEnd + 2]! << 8) | bytes[headerEnd + 3]!;
    headerEnd += 4 + words * 4;
    if (headerEnd > bytes.length) return 'header extension past the packet';
  }
  if ((first & 0x20) !== 0) {
    const padding = bytes[bytes.length - 1]!;
    if (padding === 0 || headerEnd + padding > bytes.length) return 'padding past the payload';
  }
  return undefined;
}
