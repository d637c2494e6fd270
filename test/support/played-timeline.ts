import type { SessionHost } from '@venus/gpu-worker';
import type { TimelineEvent } from '@venus/protocol';

export interface PlayedTimeline {
  events: TimelineEvent[];
  /** The recorded events of one type, typed. */
  of<T extends TimelineEvent['type']>(type: T): Extract<TimelineEvent, { type: T }>[];
}

/**
 * Records a session host's timeline and plays the client's part: each assistant audio chunk is
 * acknowledged as played to its end, on a microtask (as a client's ack arrives after the chunk).
 */
export function recordPlayedTimeline(host: SessionHost): PlayedTimeline {
  const events: TimelineEvent[] = [];
  host.onFrame((frame) => {
    if (frame.kind !== 'timeline') return;
    events.push(frame.event);
    if (frame.event.type !== 'assistant.audio') return;
    const { session } = frame.event;
    const { utteranceId, startMs, durationMs } = frame.event.data;
    queueMicrotask(() =>
      host.handleFrame({
        kind: 'playback_ack',
        session,
        utteranceId,
        playedMs: startMs + durationMs,
        source: 'client',
      }),
    );
  });
  return {
    events,
    of: <T extends TimelineEvent['type']>(type: T) =>
      events.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === type),
  };
}
