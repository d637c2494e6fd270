import type { DelegationKind } from '../scenarios/scenario.ts';
import type { ResponseInfo, SampleRecord, WorkInfo } from './sample-record.ts';
import { overlapS, type SpeechSegment, segmentAt } from './speech-segments.ts';

/** What became of one delegated piece of work in a run. */
export interface WorkOutcome {
  workId: string;
  spoken: boolean;
  cancelled: boolean;
  /** Result landed -> first audio of the response that speaks it. */
  integrationDelayS: number | null;
  /** First audio of the result minus the later of (result landed, end of the last speech of either side before it). */
  deliveryGapS: number | null;
  /** Neither side was speaking when the result was admitted into the conversation. */
  admittedAtPause: boolean | null;
  /** The spoken result overlapped the user's speech by more than 0.2 s. */
  talkedOverUser: boolean | null;
  /** Cancelled, yet its result was admitted or played after the cancel. */
  cancelledButSpoken: boolean;
  landedWhileAssistantSpoke: boolean | null;
  landedWhileUserSpoke: boolean | null;
}

export interface DelegationOutcome {
  kind: DelegationKind | null;
  works: WorkOutcome[];
  /** The sample's expected outcome happened (see eval/README.md). */
  success: boolean | null;
  /** The scenario produced the situation it is about (e.g. the result really landed mid-user-turn). */
  conditionMet: boolean | null;
}

const TALK_OVER_S = 0.2;
/**
 * The server knows the client's playout only from its acknowledgements (every 200 ms here), so a
 * result admitted with under 250 ms of the previous reply still to play counts as admitted at a pause.
 */
const PLAYOUT_SLACK_S = 0.25;

function spokenBy(record: SampleRecord, w: WorkInfo): ResponseInfo[] {
  return record.responses.filter((r) => r.speaksWork === w.workId && r.playedS > 0.2);
}

export function workOutcome(record: SampleRecord, w: WorkInfo, user: readonly SpeechSegment[]): WorkOutcome {
  const spoken = spokenBy(record, w);
  const first = spoken[0];
  const playing = (t: number, slackS = 0) =>
    record.responses.some((r) => r.playStart !== null && r.playStart <= t && r.playEnd! > t + slackS);
  const admittedAtPause =
    w.admittedAt === null || w.admittedMode !== 'speak'
      ? null
      : !segmentAt(user, w.admittedAt) && !playing(w.admittedAt, PLAYOUT_SLACK_S);
  const talkedOverUser =
    first === undefined
      ? null
      : spoken.some(
          (r) => user.reduce((sum, s) => sum + overlapS(r.playStart!, r.playEnd!, s.start, s.end), 0) > TALK_OVER_S,
        );
  const cancelledButSpoken =
    w.cancelledAt !== null &&
    ((w.admittedAt !== null && w.admittedAt > w.cancelledAt) || spoken.some((r) => r.playEnd! > w.cancelledAt! + 0.1));
  return {
    workId: w.workId,
    spoken: first !== undefined,
    cancelled: w.cancelledAt !== null,
    integrationDelayS: first && w.resultAt !== null ? first.playStart! - w.resultAt : null,
    deliveryGapS: first && w.resultAt !== null ? first.playStart! - floorFreeAt(record, first, w.resultAt, user) : null,
    admittedAtPause,
    talkedOverUser,
    cancelledButSpoken,
    landedWhileAssistantSpoke: w.resultAt === null ? null : playing(w.resultAt),
    landedWhileUserSpoke: w.resultAt === null ? null : segmentAt(user, w.resultAt) !== undefined,
  };
}

/**
 * When the floor became free for a result: it had landed, the user's speech before its audio had
 * ended, and so had every other response's audio (responses, not merged VAD stretches: the result
 * often follows the reply within the model's 0.5 s merge gap).
 */
function floorFreeAt(
  record: SampleRecord,
  self: ResponseInfo,
  resultAt: number,
  user: readonly SpeechSegment[],
): number {
  const start = self.playStart!;
  const ends = [
    ...user.filter((s) => s.end <= start + 0.05).map((s) => s.end),
    ...record.responses
      .filter((r) => r !== self && r.playEnd !== null && r.playEnd <= start + 0.05)
      .map((r) => r.playEnd!),
  ];
  return Math.max(resultAt, ...ends);
}

/**
 * Per-sample outcome of the delegation scenarios:
 * - lands_while_assistant_speaks: success = every delegated result was spoken; condition = it landed
 *   while assistant audio was playing;
 * - lands_while_user_speaks: success = spoken and not over the user; condition = it landed during
 *   the user's speech;
 * - cancelled: success = the work was cancelled and nothing of it was spoken;
 * - second_request: success = two pieces of work were delegated and both were spoken.
 */
export function delegationOutcome(
  record: SampleRecord,
  kind: DelegationKind | null,
  user: readonly SpeechSegment[],
): DelegationOutcome {
  const delegated = record.works.filter((w) => w.delegatedAt !== null);
  const works = delegated.map((w) => workOutcome(record, w, user));
  const allSpoken = works.length > 0 && works.every((w) => w.spoken);
  switch (kind) {
    case null:
      return { kind, works, success: null, conditionMet: null };
    case 'lands_while_assistant_speaks':
      return { kind, works, success: allSpoken, conditionMet: works.some((w) => w.landedWhileAssistantSpoke === true) };
    case 'lands_while_user_speaks':
      return {
        kind,
        works,
        success: allSpoken && works.every((w) => w.talkedOverUser === false),
        conditionMet: works.some((w) => w.landedWhileUserSpoke === true),
      };
    case 'cancelled':
      return {
        kind,
        works,
        success: works.length > 0 && works.every((w) => w.cancelled && !w.spoken && !w.cancelledButSpoken),
        conditionMet: works.length > 0,
      };
    case 'second_request':
      return { kind, works, success: works.length >= 2 && allSpoken, conditionMet: works.length >= 2 };
  }
}
