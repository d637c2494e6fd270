import {
  bytesToPcm,
  type InterruptionAction,
  type TimelineEvent,
  type TimelineEventOf,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import type { AssistantResponses, UtteranceEndReason } from './assistant-responses.ts';
import type { ConversationItems } from './conversation-items.ts';
import { randomId } from './ids.ts';
import type { Emit } from './outbound-event.ts';
import type { PlayoutEstimator } from './playout-estimator.ts';
import { errorEvent } from './protocol-error.ts';
import { UserAudioTurns } from './user-audio-turns.ts';

export interface TimelineRelayDeps {
  emit: Emit;
  responses: AssistantResponses;
  estimator: PlayoutEstimator;
  /** Where a spoken turn's user item goes (with `input_audio_buffer.committed`); without it no items are made for speech. */
  conversation?: ConversationItems;
  /** The user turns to commit speech into (made here from `conversation` when not given). */
  turns?: UserAudioTurns;
  /** `turn_detection: null`: the client commits its turns, so no speech_started/stopped or commits of our own. */
  pushToTalk?(): boolean;
  /** Whether the client asked for the per-chunk audio records in `venus.timeline` (default: no). */
  timelineAudio?(): boolean;
}

/** Timeline events sent once per audio chunk: in `venus.timeline` only for clients that ask. */
const AUDIO_RECORDS: ReadonlySet<TimelineEvent['type']> = new Set(['assistant.audio', 'user.audio']);

/**
 * Audio frames held for their timeline event. The worker sends each right before its event, so one
 * is the steady state; the bound only caps what a worker that sends frames without events can pin.
 */
const MAX_PENDING_AUDIO = 8;

const END_REASON: Record<Exclude<InterruptionAction, 'continue'>, UtteranceEndReason> = {
  discard: 'discarded',
  repair: 'repaired',
  park: 'parked',
};

/**
 * Maps the worker's timeline onto server events: the OpenAI-compatible ones, the `venus.*` ones,
 * and every event as `venus.timeline` (audio payloads stripped) so consoles can draw the lanes; the
 * per-chunk audio records (`assistant.audio`, `user.audio`) only where the client asked for them
 * (`session.venus.timeline_audio`): at 20 ms chunks they are 50 messages a second each.
 *
 * The compatibility trap lives here. OpenAI clients stop playback on
 * `input_audio_buffer.speech_started`, so it goes out only when the user starts speaking while the
 * assistant is silent, or when the runtime decides the user takes the floor (an interruption that
 * discards, repairs or parks the assistant's turn). Speech over the assistant that the runtime lets
 * pass (a backchannel, other-directed or background speech) yields `venus.*` events only.
 *
 * Assistant audio arrives in two parts: the samples in an `assistant_audio` frame, then the
 * `assistant.audio` timeline event with their MediaRef. The samples are held until their event, so
 * audio deltas keep their place among the other timeline events (an utterance finished or an
 * interruption between two chunks).
 *
 * @example
 *   const relay = new TimelineRelay({ emit, responses, estimator });
 *   link.onFrame(session, (frame) => {
 *     if (frame.kind === 'assistant_audio') relay.audioSamples(frame);
 *     if (frame.kind === 'timeline') relay.handle(frame.event);
 *   });
 */
export class TimelineRelay {
  readonly #deps: TimelineRelayDeps;
  /** The user item whose `speech_started` went out and whose `speech_stopped` is owed. */
  #speechItemId: string | undefined;
  #userSpeaking = false;
  #speechStartedAtMs = 0;
  /** Samples of assistant audio chunks whose timeline event has not arrived yet, keyed `utterance/chunk`. */
  readonly #pendingAudio = new Map<string, Int16Array>();
  readonly #turns: UserAudioTurns | undefined;
  /** Why the session last moved to another worker (a fleet link's `handover`), for `venus.session.resumed`. */
  #movedFor: 'drain' | 'worker_lost' | undefined;

  constructor(deps: TimelineRelayDeps) {
    this.#deps = deps;
    this.#turns =
      deps.turns ??
      (deps.conversation ? new UserAudioTurns({ emit: deps.emit, conversation: deps.conversation }) : undefined);
  }

  /** A worker frame besides timeline events: assistant audio samples, or notice that the session moves. */
  sideFrame(frame: Extract<WorkerToEdgeFrame, { kind: 'assistant_audio' | 'handover' }>): void {
    if (frame.kind === 'assistant_audio') this.audioSamples(frame);
    else this.#movedFor = frame.reason === 'draining' ? 'drain' : 'worker_lost';
  }

  /** Holds the samples of an assistant audio chunk until its `assistant.audio` event. */
  audioSamples(frame: Extract<WorkerToEdgeFrame, { kind: 'assistant_audio' }>): void {
    this.#pendingAudio.set(audioKey(frame.utteranceId, frame.audioChunkSeq), bytesToPcm(frame.pcm24k));
    if (this.#pendingAudio.size > MAX_PENDING_AUDIO) {
      const oldest = this.#pendingAudio.keys().next().value;
      if (oldest !== undefined) this.#pendingAudio.delete(oldest);
    }
  }

  handle(event: TimelineEvent): void {
    const { emit, responses } = this.#deps;
    if (!AUDIO_RECORDS.has(event.type) || this.#deps.timelineAudio?.() === true) {
      emit({ type: 'venus.timeline', event: withoutPayload(event) });
    }
    switch (event.type) {
      case 'user.speech':
        this.#userSpeech(event);
        return;
      case 'user.transcript':
        this.#turns?.transcript(event.data, () => randomId('item'));
        return;
      case 'assistant.utterance':
        if (event.data.phase === 'started') responses.started(event.data.utteranceId, event.data.continues);
        else responses.finish(event.data.utteranceId, event.data.reason ?? 'completed');
        return;
      case 'assistant.text':
        responses.text(event.data.utteranceId, event.data.delta);
        return;
      case 'assistant.audio': {
        const key = audioKey(event.data.utteranceId, event.data.audioChunkSeq);
        const pcm = this.#pendingAudio.get(key);
        this.#pendingAudio.delete(key);
        // No samples (a replayed event, or its frame was dropped): nothing to play, the event still counts.
        if (pcm !== undefined) responses.audio(event.data.utteranceId, pcm, event.data.durationMs);
        return;
      }
      case 'assistant.interruption':
        this.#interruption(event);
        return;
      case 'assistant.delegate':
        // Private: the hidden request goes to consoles as its own event, never into a transcript.
        emit({
          type: 'venus.delegation',
          work_id: event.data.workId,
          query: event.data.query,
          ...(event.data.policy === undefined ? {} : { policy: event.data.policy }),
        });
        return;
      case 'assistant.parked':
        emit({
          type: 'venus.plan.parked',
          plan_id: event.data.planId,
          item_id: event.data.utteranceId,
          remainder: event.data.remainder,
        });
        return;
      case 'assistant.resume_offer':
        emit({ type: 'venus.plan.resume_offer', plan_id: event.data.planId });
        return;
      case 'assistant.resumed':
        emit({ type: 'venus.plan.resumed', plan_id: event.data.planId });
        return;
      case 'session.incarnation':
        // The session goes on under a new incarnation (its worker was lost or drained): context rebuilt.
        // Its reason: `drain` (a planned handover) or `worker_lost` (also when no move was announced).
        if (event.data.reason === 'resumed') {
          const reason = this.#movedFor ?? 'worker_lost';
          this.#movedFor = undefined;
          emit({ type: 'venus.session.resumed', incarnation: event.data.incarnation, reason });
        }
        return;
      case 'work.state':
        emit({
          type: 'venus.work.state',
          work_id: event.data.workId,
          state: event.data.state,
          reason: event.data.reason ?? null,
          ...(event.data.functionName === undefined ? {} : { function_name: event.data.functionName }),
        });
        return;
      case 'work.progress':
        emit({
          type: 'venus.work.progress',
          work_id: event.data.workId,
          message: event.data.message,
          elapsed_ms: event.data.elapsedMs,
        });
        return;
      case 'work.result': {
        const { result } = event.data;
        emit({
          type: 'venus.work.result',
          work_id: result.workId,
          ok: result.ok,
          text: result.text,
          policy: result.policy,
          ...(result.functionName === undefined ? {} : { function_name: result.functionName }),
          ...(result.data === undefined ? {} : { data: result.data }),
        });
        return;
      }
      case 'response.instructions':
        if (!event.data.applied) {
          const message = 'this model cannot take instructions for one response; set session.instructions instead';
          emit({ type: 'venus.notice', code: 'response_instructions_ignored', message });
        }
        return;
      case 'session.error':
        emit(errorEvent({ code: event.data.code, message: event.data.message }, event.data.eventId ?? null));
        return;
      default:
        // user.text was acknowledged when the client created it; the rest is for consoles only.
        return;
    }
  }

  #userSpeech(event: TimelineEventOf<'user.speech'>): void {
    const { state, probability } = event.data;
    this.#deps.emit({ type: 'venus.user.speech', state, probability, at_ms: event.atMs });
    if (state === 'started') {
      this.#userSpeaking = true;
      this.#speechStartedAtMs = event.atMs;
      if (!this.#assistantActive()) this.#speechStarted();
      return;
    }
    this.#userSpeaking = false;
    this.#speechStopped(event.atMs);
  }

  #interruption(event: TimelineEventOf<'assistant.interruption'>): void {
    const { emit, responses, estimator } = this.#deps;
    const { action, utteranceId } = event.data;
    emit({
      type: 'venus.interruption',
      action,
      cause: event.data.cause,
      item_id: utteranceId,
      heard_ms: event.data.heardMs,
      heard_text: event.data.heardText,
      cancelled_work: event.data.cancelledWork,
      ...(event.data.planId === undefined ? {} : { plan_id: event.data.planId }),
    });
    if (action === 'continue') return;

    const targets = utteranceId === null ? responses.activeUtteranceIds() : [utteranceId];
    // The worker records a client's response.cancel as a discard too; the client stopped its own
    // playback, and no user took the floor, so no speech_started is invented for it.
    const clientCancel = targets.some((id) => responses.item(id)?.cancelRequested === true);
    // The runtime gave the user the floor: now, and only now, the OpenAI barge-in signals.
    if (!clientCancel) {
      if (!this.#userSpeaking) this.#speechStartedAtMs = event.atMs;
      this.#speechStarted();
    }
    estimator.clear();
    const responseId = targets.map((id) => responses.item(id)?.responseId).find((id) => id !== undefined);
    emit({ type: 'output_audio_buffer.cleared', response_id: responseId ?? null });
    for (const id of targets) responses.finish(id, END_REASON[action]);
    if (!clientCancel && !this.#userSpeaking) this.#speechStopped(event.atMs);
  }

  /** The assistant holds the floor while a response streams or its audio is (by estimate) still playing. */
  #assistantActive(): boolean {
    return this.#deps.responses.isActive() || this.#deps.estimator.isPlaying();
  }

  #speechStarted(): void {
    if (this.#speechItemId !== undefined || this.#deps.pushToTalk?.() === true) return;
    this.#speechItemId = randomId('item');
    this.#deps.emit({
      type: 'input_audio_buffer.speech_started',
      audio_start_ms: Math.round(this.#speechStartedAtMs),
      item_id: this.#speechItemId,
    });
  }

  #speechStopped(atMs: number): void {
    const itemId = this.#speechItemId;
    if (itemId === undefined) return;
    this.#deps.emit({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round(atMs), item_id: itemId });
    this.#speechItemId = undefined;
    this.#turns?.committed(itemId);
  }
}

function audioKey(utteranceId: string, audioChunkSeq: number): string {
  return `${utteranceId}/${audioChunkSeq}`;
}

/**
 * The event as consoles see it: video payloads removed (audio events carry only a MediaRef; the
 * samples travel as audio deltas, or not at all).
 */
export function withoutPayload(event: TimelineEvent): unknown {
  switch (event.type) {
    case 'user.video': {
      const { data: _bytes, ...data } = event.data;
      return { ...event, data };
    }
    default:
      return event;
  }
}
