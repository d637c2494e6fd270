/**
 * The clock SIP timers run on, injectable so that unit tests drive retransmissions and timeouts
 * with a fake clock instead of waiting.
 */
export interface TimerHost {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const systemTimers: TimerHost = {
  set: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** RFC 3261 §17.1.1.1 timer values (ms): round-trip estimate, largest retransmit interval, network lifetime. */
export interface SipTimerValues {
  t1: number;
  t2: number;
  t4: number;
}

export const DEFAULT_TIMER_VALUES: SipTimerValues = { t1: 500, t2: 4000, t4: 5000 };
