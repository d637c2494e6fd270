import { loadavg } from 'node:os';
import { runFleetBench } from './fleet-failover.ts';
import { fmt, table } from './report.ts';

/**
 * The `fleet` section of `npm run bench`: placement balance, failover resume time and drain time
 * of a real edge and three GPU workers on Redis (fleet-failover.ts). Figures against the targets,
 * never pass/fail.
 */
export async function benchFleet(print: (s: string) => void, redisUrl: string | undefined): Promise<void> {
  if (!redisUrl) {
    print('\n## Fleet\n(needs Redis: set REDIS_URL or install redis-server)');
    return;
  }
  process.stderr.write('fleet: an edge and three GPU workers as real processes…\n');
  const f = await runFleetBench({ redisUrl });
  print(
    table(`Fleet placement (${f.sessions} sessions on workers of capacity ${f.capacities.join('/')}; target ±10%)`, [
      {
        'sessions per worker': f.placed.join('/'),
        'fair share': f.capacities
          .map((c) => fmt((f.sessions * c) / f.capacities.reduce((a, b) => a + b, 0)))
          .join('/'),
        'max deviation % of capacity': f.balanceMaxDeviationPct,
      },
    ]),
  );
  print(
    table(
      'Failover: SIGKILL of a worker to the first assistant audio of each resumed session (target p50 ≤ 1 s, max ≤ 2 s)',
      [
        {
          resumed: f.resumeMs.n,
          'not resumed': f.notResumed,
          'p50 ms': f.resumeMs.p50,
          'p99 ms': f.resumeMs.p99,
          'max ms': f.resumeMs.max,
          'load avg': loadavg()[0] ?? 0,
        },
      ],
    ),
  );
  print(
    table(
      `Drain: a fresh worker joins, then SIGTERM of the fullest old one (VENUS_DRAIN_TIMEOUT_MS ${f.drain.drainTimeoutMs})`,
      [
        {
          'live sessions': f.drain.sessions,
          'last resumed ms': Number.isFinite(f.drain.lastResumedMs) ? f.drain.lastResumedMs : 'n/a',
          'exit ms': f.drain.exitMs,
          'resumed elsewhere': f.drain.resumed,
          'closed or errored': f.drain.closed,
        },
      ],
    ),
  );
}
