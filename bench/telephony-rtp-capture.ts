import { createSocket } from 'node:dgram';
import { mulawToLinear } from '../edge/src/audio/g711.ts';

/**
 * The telephony probe's RTP receiver, as its own small process (`node --import tsx
 * bench/telephony-rtp-capture.ts`): it binds a UDP port on 127.0.0.1, prints `port <n>`, then one
 * line per packet: `<arrival, ms since the epoch> <rms> <marker 0|1>`. Arrival times were taken in
 * the bench process before, whose event loop also runs the worker's 200 sessions: at load it stamped
 * packets hundreds of ms late, and that lag was reported as the bridge's RTP jitter. This process
 * does nothing else, so its stamps are the packets' arrival. Ends with its stdin.
 */
const socket = createSocket('udp4');
let lines: string[] = [];
let flushing = false;
const flush = () => {
  flushing = false;
  if (lines.length === 0) return;
  process.stdout.write(`${lines.join('\n')}\n`);
  lines = [];
};
socket.on('message', (bytes) => {
  const at = performance.timeOrigin + performance.now();
  // PCMU only (payload type 0, what the probe offers): not telephone-events.
  if (bytes.length < 12 || (bytes[1]! & 0x7f) !== 0) return;
  let sum = 0;
  for (let i = 12; i < bytes.length; i++) sum += mulawToLinear(bytes[i]!) ** 2;
  const rms = Math.sqrt(sum / Math.max(1, bytes.length - 12));
  lines.push(`${at.toFixed(3)} ${rms.toFixed(0)} ${(bytes[1]! & 0x80) === 0 ? 0 : 1}`);
  // One write per turn of the loop, not per packet.
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
});
socket.bind(0, '127.0.0.1', () => process.stdout.write(`port ${socket.address().port}\n`));
process.stdin.resume();
process.stdin.on('end', () => {
  flush();
  socket.close();
});
