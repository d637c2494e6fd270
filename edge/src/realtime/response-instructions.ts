import type { EdgeToWorkerFrame } from '@venus/protocol';
import { z } from 'zod';
import type { ProtocolError } from './protocol-error.ts';

type InstructionsFrame = Extract<EdgeToWorkerFrame, { kind: 'response_instructions' }>;

/** The part of `response.create`'s `response` read here; the rest is the response.create handler's. */
const ResponseInstructionsSchema = z.object({ instructions: z.string().max(20_000).optional() }).loose();

/**
 * `response.create`'s `response.instructions`: sent to the worker for the model's next response
 * only. Absent or blank instructions send nothing. Where the model port cannot apply one-shot
 * instructions the worker records them as not applied and the client gets the
 * `response_instructions_ignored` notice (`timeline-relay.ts`). Returns the error to report for a
 * malformed field, else undefined.
 *
 * @example
 *   // in the response.create handler:
 *   const error = sendResponseInstructions(event.response, session, (frame) => this.#send(frame));
 *   if (error !== undefined) return error;
 */
export function sendResponseInstructions(
  response: unknown,
  session: string,
  send: (frame: InstructionsFrame) => void,
): ProtocolError | undefined {
  if (response === undefined || response === null) return undefined;
  const parsed = ResponseInstructionsSchema.safeParse(response);
  if (!parsed.success) {
    const message = 'response.instructions must be a string of at most 20000 characters';
    return { code: 'invalid_event', message, param: 'response.instructions' };
  }
  const instructions = parsed.data.instructions?.trim();
  if (instructions) send({ kind: 'response_instructions', session, instructions });
  return undefined;
}
