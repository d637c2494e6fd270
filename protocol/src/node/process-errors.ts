/**
 * The one process-level error hook every entry point installs: an unhandled rejection that is
 * teardown noise (a socket reset while a session closed) is logged at debug; any other is logged
 * as an error and the process carries on, as Node's `warn` mode would, so one stray promise does
 * not drop every session. An uncaught exception leaves the process in an unknown state: it is
 * logged as fatal and the process exits 1 for its supervisor to restart it.
 *
 * @example
 *   installProcessErrorHooks(createLogger('edge'));
 */
import { VenusError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isBenignTeardownError } from '../teardown-errors.ts';

let installed = false;

export function installProcessErrorHooks(log: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    if (isBenignTeardownError(reason)) log.debug({ err: reason }, 'unhandled rejection during teardown');
    else log.error({ err: reason }, 'unhandled rejection');
  });
  process.on('uncaughtException', (error) => {
    // A reset peer can surface as an uncaught 'error' event on a socket nobody listened on.
    if (isBenignTeardownError(error)) {
      log.debug({ err: error }, 'uncaught teardown error');
      return;
    }
    log.fatal({ err: error }, 'uncaught exception; exiting');
    process.exit(1);
  });
}

/**
 * Runs a process's settings read; on `invalid_settings` prints the message (one plain line on
 * stderr, for the person starting it, as well as the log line) and exits 2 instead of a stack trace.
 *
 * @example
 *   const { settings } = settingsOrExit(() => readEdgeSettings(process.env), log);
 */
export function settingsOrExit<T>(read: () => T, log: Logger): T {
  try {
    return read();
  } catch (error) {
    if (!VenusError.isInstance(error) || error.code !== 'invalid_settings') throw error;
    log.fatal({ code: error.code }, error.message);
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}
