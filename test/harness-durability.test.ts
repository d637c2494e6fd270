import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BullmqDelegationProducer } from '@venus/harness-functions';
import type { DelegationRequest, WorkEvent } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, removeRedisKeys, startRedis } from './support/redis.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FUNCTIONS_MODULE = path.join(ROOT, 'test', 'harness-durability-functions.ts');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Harness {
  child: ChildProcess;
  pid: number;
}

/**
 * A real `harness` process (harness-main) with fast stalled-job recovery; resolves once it is ready.
 * Its `gated_job` runs hold until the file `gate` exists (see harness-durability-functions.ts).
 */
async function startHarness(url: string, prefix: string, gate: string, concurrency = 2): Promise<Harness> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'harness-functions/src/harness-main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL: url,
      HARNESS_PREFIX: prefix,
      HARNESS_CONCURRENCY: String(concurrency),
      HARNESS_LOCK_DURATION_MS: '2000',
      HARNESS_STALLED_INTERVAL_MS: '1000',
      HARNESS_PROGRESS_FIRST_MS: '50',
      HARNESS_PROGRESS_EVERY_MS: '100',
      HARNESS_DRAIN_MS: '0',
      HARNESS_FUNCTIONS_MODULE: FUNCTIONS_MODULE,
      DURABILITY_GATE: gate,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<number>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.includes('"harness.ready"')) resolve((JSON.parse(line) as { pid: number }).pid);
    });
    child.once('exit', (code) => reject(new Error(`harness exited (${code}) before it was ready: ${stderr}`)));
  });
  const pid = await ready;
  return { child, pid };
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function producerFor(url: string, prefix: string, errors: unknown[] = []) {
  const producer = new BullmqDelegationProducer({ url, prefix, blockMs: 1_000, onError: (e) => errors.push(e) });
  cleanups.push(() => producer.close());
  const events: WorkEvent[] = [];
  producer.subscribe((event) => events.push(event));
  let counter = 0;
  const request = (query: string): DelegationRequest => ({
    workId: `dur-${randomUUID().slice(0, 8)}-${++counter}`,
    session: `s-${counter}`,
    incarnation: 1,
    tenant: 'durability',
    query,
    evidenceCutoffSeq: 1,
    chunk: 1,
    createdAtMs: Date.now(),
  });
  const of = (workId: string, kind: WorkEvent['kind']) => events.filter((e) => e.workId === workId && e.kind === kind);
  return { producer, events, request, of };
}

describe('harness durability (real processes)', () => {
  it('finishes a job on another harness when the one running it is SIGKILLed, with one result', async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `dur:${randomUUID()}:`;
    cleanups.push(() => removeRedisKeys(prefix, url));
    const gate = gateFile();
    const [first, second] = await Promise.all([startHarness(url, prefix, gate), startHarness(url, prefix, gate)]);
    const { producer, events, request, of } = producerFor(url, prefix);

    // The job holds until the gate opens, so the kill always lands while it runs.
    const req = request('gated crash');
    await producer.submit(req);
    await expect.poll(() => of(req.workId, 'progress').length, { timeout: 15_000 }).toBeGreaterThan(0);
    const progress = of(req.workId, 'progress')[0];
    const runningPid = Number(/pid (\d+)/.exec(progress?.kind === 'progress' ? progress.message : '')?.[1]);
    expect([first.pid, second.pid]).toContain(runningPid);
    const [victim, survivor] = runningPid === first.pid ? [first, second] : [second, first];
    await killed(victim.child);
    writeFileSync(gate, '');

    await expect.poll(() => of(req.workId, 'result').length, { timeout: 20_000, interval: 100 }).toBe(1);
    const [result] = of(req.workId, 'result');
    expect(result).toMatchObject({
      result: { ok: true, text: 'Finished crash.', data: { label: 'crash', pid: survivor.pid } },
    });
    const states = events
      .filter((e) => e.workId === req.workId && e.kind === 'state')
      .map((e) => e.kind === 'state' && e.state);
    expect(states).toEqual(['QUEUED', 'RUNNING', 'QUEUED', 'RUNNING']);
    expect(await producer.getWorkState(req.workId)).toMatchObject({ state: 'COMPLETED', attempts: 2, end: 'result' });

    // The stream itself, the persisted record, holds the result once.
    const admin = new Redis(url);
    cleanups.push(() => admin.quit().then(() => undefined));
    const entries = await admin.xrange(`${prefix}work-events:${producer.hostId}`, '-', '+');
    const results = entries.filter(([, fields]) => fields[1]?.includes('"kind":"result"'));
    expect(results).toHaveLength(1);
    // Written by the second attempt, the one on the survivor.
    expect(results[0]![1]).toEqual(['e', expect.any(String), 'a', expect.stringMatching(`^${req.workId}#2@`)]);
  }, 60_000);

  it('loses no accepted delegation when Redis (AOF, fsync always) and the harness are SIGKILLed and restarted', async () => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'venus-aof-'));
    const url = `redis://127.0.0.1:${port}`;
    const prefix = 'aof:';
    let redis = await startRedis(port, dir);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => killed(redis));

    const gate = gateFile();
    const consumer = await startHarness(url, prefix, gate, 2);
    const { producer, request, of } = producerFor(url, prefix);
    // The first job is quick; the others hold until the gate opens, after the kills, so the second
    // (started with the first) is mid-run when everything dies and none of the held ones is done.
    const accepted = Array.from({ length: 8 }, (_, i) => request(i === 0 ? 'slow job0 1' : `gated job${i}`));
    for (const req of accepted) await producer.submit(req);
    await expect.poll(() => of(accepted[0]!.workId, 'result').length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => of(accepted[1]!.workId, 'progress').length, { timeout: 15_000 }).toBeGreaterThan(0);

    await Promise.all([killed(redis), killed(consumer.child)]);
    expect(accepted.filter((r) => of(r.workId, 'result').length > 0)).toEqual([accepted[0]]);

    // The new harness starts while Redis is still loading its AOF and waits for it.
    writeFileSync(gate, '');
    [redis] = await Promise.all([startRedis(port, dir), startHarness(url, prefix, gate, 2)]);
    await expect
      .poll(() => accepted.filter((r) => of(r.workId, 'result').length > 0).length, { timeout: 30_000, interval: 100 })
      .toBe(accepted.length);
    for (const req of accepted) {
      expect(of(req.workId, 'result')).toHaveLength(1);
      expect(of(req.workId, 'result')[0]).toMatchObject({
        result: { ok: true, text: `Finished ${req.query.split(' ')[1]}.` },
      });
    }
    // The job that was running when everything died ran again from the persisted queue.
    expect(await producer.getWorkState(accepted[1]!.workId)).toMatchObject({ attempts: 2, end: 'result' });
  }, 90_000);
});

/** A path in a fresh temporary folder, removed after the test: the gate opens when the file exists. */
function gateFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-gate-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'open');
}
