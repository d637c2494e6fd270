/**
 * A one-line progress indicator: rewritten in place on a terminal, one line per tenth otherwise
 * (so CI logs stay short).
 *
 * @example
 *   const progress = new Progress('running', total);
 *   progress.update(done, failed); … progress.end();
 */
export class Progress {
  private readonly started = performance.now();
  private lastDecile = -1;
  private readonly tty = process.stdout.isTTY === true;

  constructor(
    private readonly what: string,
    private readonly total: number,
  ) {}

  update(done: number, failed: number, note = ''): void {
    const elapsed = (performance.now() - this.started) / 1000;
    const left = done > 0 ? (elapsed / done) * (this.total - done) : null;
    const line =
      `[eval] ${this.what} ${done}/${this.total}` +
      (failed ? ` (${failed} failed)` : '') +
      ` · ${clock(elapsed)} elapsed` +
      (left === null ? '' : ` · ~${clock(left)} left`) +
      (note ? ` · ${note}` : '');
    if (this.tty) {
      process.stdout.write(`\r${line.padEnd(100)}`);
      return;
    }
    const decile = Math.floor((done / Math.max(1, this.total)) * 10);
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      console.log(line);
    }
  }

  end(): void {
    if (this.tty) process.stdout.write('\n');
  }
}

function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
