import { randomUUID } from 'node:crypto';
import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { type Sample, sampleValue, scrape } from './support/prometheus-text.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';
import { until } from './support/until.ts';
import { startVenusProcess, type VenusProcess } from './support/venus-process.ts';

/**
 * `/metrics` scraped after real sessions: on `npm start`'s embedded runtime (edge, worker and
 * harness series in one registry), and on separate edge, gpu-worker and harness processes over
 * real Redis. Values are checked for what the sessions did (sessions 1 then 0, steps counted,
 * delegations delivered), never for timings.
 */

/** Every series docs/observability.md names; each must be declared (`# TYPE`) on `npm start`. */
const SERIES = [
  'venus_step_cost_seconds',
  'venus_deadline_misses_total',
  'venus_sessions',
  'venus_delegations_total',
  'venus_harness_runs_total',
  'venus_queue_jobs',
  'venus_relay_reconnects_total',
  'venus_failovers_total',
  'venus_stop_latency_seconds',
  'venus_response_latency_seconds',
  'venus_edge_connections',
];

async function connect(wsUrl: string): Promise<RealtimeClient> {
  const client = await RealtimeClient.connect({ url: wsUrl, acknowledgePlayback: true });
  client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
  client.startMicrophone();
  return client;
}

/** A typed question whose answer needs a delegation; resolves once its result was delivered. */
async function delegateAndDeliver(client: RealtimeClient): Promise<void> {
  client.say('What time is it in Tokyo?');
  await client.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'DELIVERED', 60_000);
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  sampleValue(samples, name, labels) ?? Number.NaN;

describe('/metrics on the embedded runtime', () => {
  let runtime: EmbeddedRuntime;
  let tts: EspeakTts;
  let metricsUrl: string;
  beforeAll(async () => {
    runtime = await startEmbeddedRuntime({ port: 0, functions: createBuiltinFunctions({ latencyMs: 300 }) });
    metricsUrl = `${runtime.url}/metrics`;
    tts = await EspeakTts.create();
  });
  afterAll(async () => {
    tts?.close();
    await runtime?.close();
  });

  it('counts a session, its steps, its delivered delegation and a barge-in stop, then the session ending', async () => {
    const text = await (await fetch(metricsUrl)).text();
    for (const name of SERIES) expect(text, name).toContain(`# TYPE ${name} `);
    const before = await scrape(metricsUrl);
    expect(value(before, 'venus_sessions', { worker: 'embedded' })).toBe(0);

    const client = await connect(`${runtime.url.replace('http', 'ws')}/v1/realtime`);
    await delegateAndDeliver(client);
    // A barge-in: the user speaks over the assistant's reply, which stops.
    client.say("What's the weather in Paris?");
    await client.waitFor((e) => e.type === 'response.output_audio.delta');
    await client.silence(700);
    await client.speak(await tts.synthesize('Wait, wait, stop there, I need to ask something else.', 'en-us+m3'));
    await client.waitForTimeline((e) => e.type === 'assistant.interruption' && e.data.action !== 'continue', 30_000);
    // The assistant answers what the user said: its first audio after the end of that speech. The
    // worker records the metric before it relays the event, so the scrape below already holds it.
    await client.waitForTimeline(
      (e) =>
        e.type === 'assistant.audio' &&
        e.data.startMs === 0 &&
        client.timeline.some((s) => s.type === 'user.speech' && s.data.state === 'stopped' && s.seq < e.seq),
      45_000,
    );

    const during = await scrape(metricsUrl);
    expect(value(during, 'venus_sessions', { worker: 'embedded' })).toBe(1);
    expect(value(during, 'venus_edge_connections', { transport: 'websocket' })).toBe(1);
    expect(value(during, 'venus_step_cost_seconds_count', { worker: 'embedded' })).toBeGreaterThan(0);
    expect(value(during, 'venus_delegations_total', { state: 'QUEUED' })).toBeGreaterThanOrEqual(1);
    expect(value(during, 'venus_delegations_total', { state: 'DELIVERED' })).toBeGreaterThanOrEqual(1);
    expect(value(during, 'venus_stop_latency_seconds_count', { worker: 'embedded' })).toBeGreaterThanOrEqual(1);
    expect(value(during, 'venus_stop_latency_seconds_sum', { worker: 'embedded' })).toBeGreaterThan(0);
    expect(value(during, 'venus_response_latency_seconds_count', { worker: 'embedded' })).toBeGreaterThanOrEqual(1);
    // Node's own series share the registry, labelled with the process.
    expect(value(during, 'process_resident_memory_bytes', { process: 'start' })).toBeGreaterThan(0);

    await client.close();
    let after: Sample[] = [];
    await until(
      'the session and its connection to end in the series',
      () =>
        value(after, 'venus_sessions', { worker: 'embedded' }) === 0 &&
        value(after, 'venus_edge_connections', { transport: 'websocket' }) === 0,
      30_000,
      async () => {
        after = await scrape(metricsUrl);
      },
    );
    const steps = value(after, 'venus_step_cost_seconds_count', { worker: 'embedded' });
    const misses = value(after, 'venus_deadline_misses_total', { worker: 'embedded' });
    // Missed steps are steps too: never more misses than steps.
    expect(Number.isNaN(misses) ? 0 : misses).toBeLessThanOrEqual(steps);
  }, 180_000);
});

describe('/metrics on separate edge, gpu-worker and harness processes', () => {
  const prefix = `test:metrics:${randomUUID()}:`;
  const processes: VenusProcess[] = [];
  let edgeUrl: string;
  let workerMetrics: string;
  let harnessMetrics: string;
  beforeAll(async () => {
    const redis = testRedisUrl();
    const shared = { VENUS_REDIS_URL: redis, VENUS_REDIS_PREFIX: prefix, VENUS_HARNESS_PREFIX: prefix };
    const [worker, harness] = await Promise.all([
      startVenusProcess(
        'embedded/gpu-worker-main.ts',
        { ...shared, VENUS_RELAY_PORT: '0', VENUS_WORKER_ID: 'metrics-w1', VENUS_FLEET_PREFIX: `${prefix}fleet:` },
        /relay\s+(ws:\/\/127\.0\.0\.1:(\d+)\/relay)/,
      ),
      startVenusProcess(
        'harness-functions/src/harness-main.ts',
        { ...shared, VENUS_METRICS_PORT: '0', VENUS_HARNESS_BUILTIN_LATENCY_MS: '300' },
        /"metrics":"(http:\/\/[^"]+)"/,
      ),
    ]);
    processes.push(worker, harness);
    workerMetrics = `http://127.0.0.1:${worker.ready[2]}/metrics`;
    harnessMetrics = harness.ready[1]!;
    const edge = await startVenusProcess(
      'edge/src/edge-main.ts',
      { VENUS_PORT: '0', VENUS_WORKERS: worker.ready[1]! },
      /edge ready: (ws:\/\/\S+\/v1\/realtime)/,
    );
    processes.push(edge);
    edgeUrl = edge.ready[1]!;
  }, 180_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await removeRedisKeys(prefix);
  });

  it('each process serves its own series with what the session did', async () => {
    expect(value(await scrape(workerMetrics), 'venus_sessions', { worker: 'metrics-w1' })).toBe(0);
    const client = await connect(edgeUrl);
    await delegateAndDeliver(client);
    const worker = await scrape(workerMetrics);
    expect(value(worker, 'venus_sessions', { worker: 'metrics-w1', process: 'gpu-worker' })).toBe(1);
    expect(value(worker, 'venus_step_cost_seconds_count', { worker: 'metrics-w1' })).toBeGreaterThan(0);
    expect(value(worker, 'venus_delegations_total', { state: 'DELIVERED' })).toBeGreaterThanOrEqual(1);
    const edgeMetrics = edgeUrl.replace(/^ws/, 'http').replace(/\/v1\/realtime$/, '/metrics');
    expect(value(await scrape(edgeMetrics), 'venus_edge_connections', { transport: 'websocket' })).toBe(1);
    const harness = await scrape(harnessMetrics);
    expect(
      value(harness, 'venus_harness_runs_total', { outcome: 'completed', process: 'harness' }),
    ).toBeGreaterThanOrEqual(1);
    // The delivered job is kept among the completed ones (removeOnComplete keeps the last 1,000).
    expect(value(harness, 'venus_queue_jobs', { state: 'completed' })).toBeGreaterThanOrEqual(1);
    expect(value(harness, 'venus_queue_jobs', { state: 'waiting' })).toBe(0);

    await client.close();
    let after: Sample[] = [];
    await until(
      'the worker to count the session gone',
      () => value(after, 'venus_sessions', { worker: 'metrics-w1' }) === 0,
      30_000,
      async () => {
        after = await scrape(workerMetrics);
      },
    );
    let edgeAfter: Sample[] = [];
    await until(
      'the edge to count the connection gone',
      () => value(edgeAfter, 'venus_edge_connections', { transport: 'websocket' }) === 0,
      30_000,
      async () => {
        edgeAfter = await scrape(edgeMetrics);
      },
    );
  }, 180_000);
});
