import { describe, expect, it } from 'vitest';
import { runEdgeFrameCost } from '../bench/edge-frame-cost.ts';
import { runEdgeInProcess, runRelayOverhead, type ServerSide } from '../bench/relay-overhead.ts';

/** Every session opened, every frame sent came back in order, nothing failed, and CPU was read. */
function expectEveryFrameEchoed(side: ServerSide, sessions: number): void {
  expect(side.client.opened).toBe(sessions);
  expect(side.client.framesSent).toBeGreaterThan(0);
  expect(side.client.echoes).toBe(side.client.framesSent);
  expect(side.client.outOfOrder).toBe(0);
  expect(side.client.errors).toBe(0);
  expect(side.client.unexpectedCloses).toBe(0);
  expect(side.serverCpuUs).toBeGreaterThan(0);
}

// The relay benchmark measures by counting echoes: it has to see every frame come back, in order,
// through both the bare server and the real edge -> relay -> worker path. A few sessions for a
// second check the measuring itself; the figures are `npm run bench`'s business, not asserted here.
describe('relay overhead benchmark (smoke)', () => {
  it('gets every frame echoed in order through the bare server and through edge + relay + worker', async () => {
    const r = await runRelayOverhead({ sessions: 4, warmupS: 0.5, measureS: 1.5 });
    for (const side of [r.baseline, r.edge]) expectEveryFrameEchoed(side, 4);
    expect(r.workerCpuPct).toBeGreaterThan(0);
    expect(r.linkDrops + r.slowConsumerDrops).toBe(0);
    expect(r.linkDisconnects).toEqual([]);
  }, 90_000);

  it('measures the client side alone and the protocol floor: every frame echoed in order', async () => {
    const r = await runEdgeInProcess({ sessions: 3, warmupS: 0.5, measureS: 1 });
    for (const side of [r.baseline, r.protocolFloor, r.edge]) expectEveryFrameEchoed(side, 3);
    // The worker's codec half was timed inside the window and left out of the edge's figure.
    expect(r.workerHalfUs).toBeGreaterThan(0);
    expect(r.cpuPerEchoUs).toBeLessThan(r.edge.serverCpuUs / r.edge.client.echoes);
  }, 90_000);

  it('times the edge alone on the same frames: a GA client gets one event per frame, its audio delta', () => {
    // No per-chunk venus.timeline record: the client did not ask for session.venus.timeline_audio.
    const cost = runEdgeFrameCost(200);
    expect(cost.messagesPerFrame).toBe(1);
    expect(cost.bytesPerFrame).toBeGreaterThan(1280); // the echoed audio, base64
    expect(cost.edgeUs).toBeGreaterThan(0);
  });

  it('times the WebRTC path on the same frames: the audio goes as samples, nothing as JSON', () => {
    // runEdgeFrameCost throws if the typed sink did not get every echoed frame's samples.
    const cost = runEdgeFrameCost(200, { typed: true });
    expect(cost.messagesPerFrame).toBe(0);
    expect(cost.bytesPerFrame).toBe(0); // no base64 audio, and no per-frame event, on the data channel
    expect(cost.edgeUs).toBeGreaterThan(0);
  });
});
