/**
 * Over WebRTC the audio formats are fixed by the media track (Opus), so a `session.update` that
 * sets `input_audio_format`/`output_audio_format` (beta) or `audio.input.format`/`audio.output.format`
 * (GA) has those fields removed before the core sees it; the rest of the update applies. Returns the
 * text to pass on and, when something was removed, a notice for the client. Anything that is not a
 * well-formed `session.update` passes through untouched (the core reports what is wrong with it).
 *
 * @example
 *   stripAudioFormats('{"type":"session.update","session":{"voice":"en","input_audio_format":"g711_ulaw"}}')
 *   // -> { text: '{"type":"session.update","session":{"voice":"en"}}', notice: '…' }
 */
export function stripAudioFormats(text: string): { text: string; notice?: string } {
  if (!text.includes('session.update')) return { text };
  let event: { type?: unknown; session?: unknown };
  try {
    event = JSON.parse(text) as typeof event;
  } catch {
    return { text };
  }
  if (event.type !== 'session.update' || !isObject(event.session)) return { text };
  const removed = removeAudioFormats(event.session);
  if (removed.length === 0) return { text };
  return {
    text: JSON.stringify(event),
    notice: `${removed.join(', ')} ignored: over WebRTC the audio is Opus on the media track`,
  };
}

/** Deletes the audio format fields of a session object in place; returns the names removed. */
export function removeAudioFormats(session: Record<string, unknown>): string[] {
  const removed: string[] = [];
  for (const field of ['input_audio_format', 'output_audio_format']) {
    if (field in session) {
      delete session[field];
      removed.push(`session.${field}`);
    }
  }
  if (isObject(session.audio)) {
    for (const side of ['input', 'output']) {
      const part = session.audio[side];
      if (isObject(part) && 'format' in part) {
        delete part.format;
        removed.push(`session.audio.${side}.format`);
      }
    }
  }
  return removed;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
