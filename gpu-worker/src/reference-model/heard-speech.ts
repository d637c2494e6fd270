import type { UserTranscript } from '@venus/protocol';
import type { DialogueStepPlan } from '../duplex-dialogue/duplex-dialogue.ts';
import { type Interruption, stopsEarly } from '../perception/overlap-policy.ts';
import type { RecognisedUtterance, UtteranceRecognition } from '../perception/utterance-recognition.ts';
import type { VoiceActivity, VoiceUpdate } from '../perception/voice-activity.ts';
import { readOverlap, understandRequest } from './intents.ts';
import { MidTurnHold } from './mid-turn-hold.ts';
import { UNCLEAR_REPLY } from './replies.ts';
import { SameSpeech } from './same-speech.ts';
import type { UtteranceSpec } from './utterance.ts';

/** What hearing words needs of the session that acts on them. */
export interface HeardSpeechHost {
  /** Whether the assistant is speaking now, as the user hears it. */
  speaking(): boolean;
  /** The last step's overlaps were judged by the trained head (not the v1 rules). */
  headJudges(): boolean;
  /** A question of the model's waits for its answer (a city, a resume offer). */
  awaitsAnswer(): boolean;
  stop(verdict: Interruption): void;
  /** Whether the words correct what the assistant is saying ("no, I meant Paris" over Rome's answer). */
  corrects(text: string): boolean;
  /** Utterances recognised since the last step, reported on the next output step. */
  readonly transcripts: UserTranscript[];
  /** Words acted on like typed text. */
  hear(text: string): void;
  /** Words that cut the assistant off, heard once it stopped: what the user wanted instead. */
  heardCut(text: string): void;
  say(spec: UtteranceSpec): void;
}

/**
 * The words the reference model hears in the user's audio through its own recogniser, and which
 * of them it acts on. The step's audio goes to the recogniser; a stop word cuts the assistant off
 * before the burst's verdict (under the v1 rules); each recognised utterance is reported as a
 * transcript, and acted on like typed text unless it was background, a backchannel over the
 * assistant, or speech the client already sent as text. A fragment that is not a whole request yet
 * is held while the user may go on after a pause.
 *
 * @example
 *   const hearing = new HeardSpeech(recognition, dialogue.voice, host);
 *   hearing.perceived(plan, voice, wasInSpeech); // once voice activity has heard the step
 */
export class HeardSpeech {
  readonly #recognition: UtteranceRecognition;
  readonly #voice: VoiceActivity;
  readonly #host: HeardSpeechHost;
  /** The burst being heard cut the assistant off: its words are read as what the user wanted instead. */
  #cutBySpeech = false;
  /** The last burst judged was background, or carried on through by the head: its words are not acted on. */
  #backgroundBurst = false;
  /** The head carried on through the burst taking it for a backchannel (see #heardSpeech). */
  #passedAsBackchannel = false;
  readonly #sameSpeech = new SameSpeech();
  #stepAtMs = 0;
  /** A fragment held while the user may go on after a pause. */
  readonly #pause = new MidTurnHold();

  constructor(recognition: UtteranceRecognition, voice: VoiceActivity, host: HeardSpeechHost) {
    this.#recognition = recognition;
    this.#voice = voice;
    this.#host = host;
  }

  /** The step's audio goes to the recogniser; early stop words cut in; recognised utterances are heard. */
  perceived(plan: DialogueStepPlan, voice: VoiceUpdate, wasInSpeech: boolean): void {
    const rec = this.#recognition;
    this.#stepAtMs = plan.request.atMs;
    if (plan.texts.length > 0) plan.texts = this.#sameSpeech.keepTexts(plan.texts, this.#stepAtMs);
    if (!wasInSpeech && this.#voice.inSpeech) {
      this.#backgroundBurst = false;
      this.#passedAsBackchannel = false;
    }
    const speechInStep = wasInSpeech || this.#voice.inSpeech || voice.milestones.some((m) => m.at === 'ended');
    const audio = plan.audio.map((pcm, i) => ({ seq: plan.audioSeqs[i] ?? 0, pcm }));
    rec.feed(audio, speechInStep, this.#voice.inSpeech);
    const burst = this.#voice.activeBurst;
    if (!this.#host.headJudges() && this.#host.speaking() && stopsEarly(burst, rec.partial, this.#voice.foregroundDb)) {
      this.#voice.claimFloor();
      this.#voice.learnLevel(burst.levelDb);
      this.#cutBySpeech = true;
      this.#host.stop({ action: 'discard', cause: 'interruption', cancelsWork: false });
    }
    for (const u of rec.takeFinals()) this.#heardSpeech(u);
    // The user went on: the held words wait for the final of what they are saying now.
    const due = this.#pause.due(this.#stepAtMs, this.#voice.inSpeech);
    if (due !== null) this.#answerHeard(due);
  }

  /** An overlap verdict was given on the burst being heard. */
  judged(verdict: Interruption): void {
    if (verdict.cause === 'background' || (this.#host.headJudges() && verdict.action === 'continue')) {
      this.#backgroundBurst = true;
      this.#passedAsBackchannel = verdict.cause === 'backchannel';
    } else if (verdict.action !== 'continue' && this.#host.speaking()) this.#cutBySpeech = true;
  }

  close(): Promise<void> {
    return this.#recognition.close();
  }

  /** A recognised utterance: reported as a transcript, and acted on like typed text when it is sure. */
  #heardSpeech(u: RecognisedUtterance): void {
    const { final } = u;
    const text = final.text.trim();
    const cut = this.#cutBySpeech;
    this.#cutBySpeech = false;
    // The head judges a burst from its first few hundred ms, before any word is recognised; "No, no,
    // I meant Paris" starts like a backchannel. When the words of a burst it carried on through as a
    // backchannel turn out to correct what the assistant is saying, the user takes the floor late
    // (a repair) rather than not at all. Only that: other-directed and background verdicts stand.
    const lateCorrection =
      this.#passedAsBackchannel && final.inGrammar && this.#host.speaking() && this.#host.corrects(text);
    const passedOver =
      !lateCorrection &&
      (this.#backgroundBurst || (this.#host.speaking() && !cut && readOverlap(text) === 'backchannel'));
    this.#host.transcripts.push({
      text,
      confidence: final.confidence,
      inGrammar: final.inGrammar,
      addressed: !passedOver,
      audio: { fromInputSeq: u.fromInputSeq, toInputSeq: u.toInputSeq, durationMs: final.audioMs },
    });
    if (lateCorrection) {
      this.#backgroundBurst = false;
      this.#passedAsBackchannel = false;
      // The client already sent this speech's words as text, which was acted on then.
      if (this.#sameSpeech.textCameFirst(this.#stepAtMs)) return;
      this.#sameSpeech.actedOn(text, this.#stepAtMs);
      this.#host.hear(text);
      return;
    }
    if (text === '' || this.#backgroundBurst) return;
    // The client already sent this speech's words as text.
    if (this.#sameSpeech.textCameFirst(this.#stepAtMs)) return;
    // A grammar maps any speech onto itself: low-confidence words are not forced onto a command.
    const words = final.inGrammar ? text : '';
    const held = this.#pause.take();
    const joined = held === null ? words : `${held} ${words}`.trim();
    // Not a whole request yet and nothing else going on: the user may only be pausing mid-turn.
    if (held === null && !cut && !this.#host.speaking() && this.#mayGoOn(joined)) {
      this.#pause.hold(joined, this.#stepAtMs);
      return;
    }
    if (cut && !this.#host.speaking() && joined !== '') {
      this.#sameSpeech.actedOn(joined, this.#stepAtMs);
      this.#host.heardCut(joined);
      return;
    }
    this.#answerHeard(joined);
  }

  /** What the user said, acted on like typed text ('' = words the grammar did not fit). */
  #answerHeard(text: string): void {
    if (text === '') {
      if (!this.#host.speaking()) this.#host.say({ text: UNCLEAR_REPLY, role: 'other' });
      return;
    }
    this.#sameSpeech.actedOn(text, this.#stepAtMs);
    this.#host.hear(text);
  }

  /**
   * Whether spoken words (or '' for words the grammar did not fit) may be the first part of a
   * request the user goes on with after a pause: not a request the model can act on, not a
   * backchannel, cancel or stop, and no question of the model's waits for an answer.
   */
  #mayGoOn(text: string): boolean {
    if (this.#host.awaitsAnswer()) return false;
    if (text === '') return true;
    // A correction ("no, Dublin") when nothing is being said is heard like any request (`hear`).
    const reading = readOverlap(text);
    if (reading !== 'other' && reading !== 'correction') return false;
    const kind = understandRequest(text).kind;
    return kind === 'unknown' || kind === 'missing_city';
  }
}
