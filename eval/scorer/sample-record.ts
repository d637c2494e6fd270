import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LoggedEvent } from '../runner/eval-client.ts';
import type { PlayoutRecord } from '../runner/run-sample.ts';

/** One assistant response as the client saw and played it (times in seconds on the input clock). */
export interface ResponseInfo {
  responseId: string;
  itemId: string;
  createdAt: number;
  doneAt: number | null;
  status: string | null;
  transcript: string;
  /** First and last audible moment on the client's speaker; null if nothing played. */
  playStart: number | null;
  playEnd: number | null;
  playedS: number;
  droppedS: number;
  /** Venus: the utterance this one repairs, or the parked plan it resumes. */
  continues: string | null;
  resumesPlan: boolean;
  /** Venus: the delegated work whose result this response speaks. */
  speaksWork: string | null;
}

export interface InterruptionInfo {
  at: number;
  action: string;
  cause: string;
  itemId: string | null;
}

export interface WorkInfo {
  workId: string;
  delegatedAt: number | null;
  states: { state: string; at: number }[];
  resultAt: number | null;
  resultText: string | null;
  admittedAt: number | null;
  admittedMode: string | null;
  cancelledAt: number | null;
}

/** Everything the scorer reads from one run: responses, interruptions, work, flushes, sent text. */
export interface SampleRecord {
  responses: ResponseInfo[];
  interruptions: InterruptionInfo[];
  works: WorkInfo[];
  flushes: number[];
  transcriptsSent: { at: number; text: string }[];
  venus: boolean;
  totalS: number;
  errors: number;
  /** Venus: foreground steps that missed their chunk deadline (a loaded machine shows here). */
  deadlineMisses: number;
}

type Json = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Reads `events.jsonl` and `playout.json` of one run into a `SampleRecord`. Venus runs also carry
 * the timeline (`venus.timeline`), from which each delegated work is followed to the response that
 * spoke its result: the first utterance that starts after the result's admission, confirmed by its
 * text where the result's text is known.
 */
export function readSampleRecord(runDir: string): SampleRecord {
  const playout = JSON.parse(readFileSync(path.join(runDir, 'playout.json'), 'utf8')) as PlayoutRecord;
  const log = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LoggedEvent);
  const responses = new Map<string, ResponseInfo>();
  const byItem = new Map<string, ResponseInfo>();
  const interruptions: InterruptionInfo[] = [];
  const works = new Map<string, WorkInfo>();
  const flushes: number[] = [];
  const continues = new Map<string, string>();
  const parkedPlans = new Set<string>();
  const admittedOrder: string[] = [];
  const utteranceWork = new Map<string, string>();
  let errors = 0;
  let deadlineMisses = 0;
  const work = (id: string): WorkInfo => {
    let w = works.get(id);
    if (!w) {
      w = {
        workId: id,
        delegatedAt: null,
        states: [],
        resultAt: null,
        resultText: null,
        admittedAt: null,
        admittedMode: null,
        cancelledAt: null,
      };
      works.set(id, w);
    }
    return w;
  };

  for (const { t, dir, event } of log) {
    if (dir !== 'in') continue;
    const at = t / 1000;
    const type = String(event.type);
    switch (type) {
      case 'response.created': {
        const response = event.response as Json;
        const id = String(response.id);
        const venus = response.venus as Json | undefined;
        responses.set(id, {
          responseId: id,
          itemId: '',
          createdAt: at,
          doneAt: null,
          status: null,
          transcript: '',
          playStart: null,
          playEnd: null,
          playedS: 0,
          droppedS: 0,
          continues: str(venus?.continues),
          resumesPlan: false,
          speaksWork: null,
        });
        break;
      }
      case 'response.output_item.added': {
        const r = responses.get(String(event.response_id));
        const item = event.item as Json | undefined;
        if (r && item?.id) {
          r.itemId = String(item.id);
          byItem.set(r.itemId, r);
        }
        break;
      }
      case 'response.output_audio_transcript.delta': {
        const r = responses.get(String(event.response_id));
        if (r) r.transcript += String(event.delta ?? '');
        break;
      }
      case 'response.done': {
        const response = event.response as Json;
        const r = responses.get(String(response.id));
        if (r) {
          r.doneAt = at;
          r.status = str(response.status);
        }
        break;
      }
      case 'output_audio_buffer.cleared':
      case 'input_audio_buffer.speech_started':
        flushes.push(at);
        break;
      case 'venus.interruption':
        interruptions.push({
          at,
          action: String(event.action),
          cause: String(event.cause),
          itemId: str(event.item_id),
        });
        break;
      case 'venus.delegation':
        work(String(event.work_id)).delegatedAt = at;
        break;
      case 'venus.work.state': {
        const w = work(String(event.work_id));
        const state = String(event.state);
        w.states.push({ state, at });
        if ((state === 'CANCELLING' || state === 'CANCELLED') && w.cancelledAt === null) w.cancelledAt = at;
        break;
      }
      case 'venus.work.result': {
        const w = work(String(event.work_id));
        w.resultAt = at;
        w.resultText = str(event.text);
        break;
      }
      case 'venus.plan.parked':
        parkedPlans.add(String(event.plan_id));
        break;
      case 'venus.timeline': {
        const tl = event.event as { type?: string; data?: Json } | undefined;
        if (tl?.type === 'deadline.missed') deadlineMisses += 1;
        if (tl?.type === 'work.admitted' && tl.data) {
          const w = work(String(tl.data.workId));
          w.admittedAt = at;
          w.admittedMode = str(tl.data.mode);
          if (w.admittedMode === 'speak') admittedOrder.push(w.workId);
        }
        if (tl?.type === 'assistant.utterance' && tl.data?.phase === 'started') {
          const id = String(tl.data.utteranceId);
          if (typeof tl.data.continues === 'string') continues.set(id, tl.data.continues);
          const next = admittedOrder.shift();
          if (next) utteranceWork.set(id, next);
        }
        break;
      }
      case 'error':
        errors += 1;
        break;
    }
  }

  for (const item of playout.items) {
    const r = byItem.get(item.itemId) ?? (item.responseId ? responses.get(item.responseId) : undefined);
    if (!r) continue;
    r.playStart = item.playedMs > 0 ? item.startMs / 1000 : null;
    r.playEnd = item.playedMs > 0 ? item.endMs / 1000 : null;
    r.playedS = item.playedMs / 1000;
    r.droppedS = item.droppedMs / 1000;
  }
  for (const r of responses.values()) {
    const c = continues.get(r.itemId) ?? r.continues;
    r.continues = c ?? null;
    r.resumesPlan = c !== null && c !== undefined && (parkedPlans.has(c) || c.startsWith('plan_'));
  }
  linkSpokenResults([...responses.values()], [...works.values()], utteranceWork);

  return {
    responses: [...responses.values()].sort((a, b) => a.createdAt - b.createdAt),
    interruptions,
    works: [...works.values()],
    flushes,
    transcriptsSent: playout.transcripts.map((s) => ({ at: s.t / 1000, text: s.text })),
    venus: playout.venus,
    totalS: playout.totalS,
    errors,
    deadlineMisses,
  };
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

function linkSpokenResults(responses: ResponseInfo[], works: WorkInfo[], byOrder: Map<string, string>): void {
  for (const r of responses) {
    const ordered = byOrder.get(r.itemId);
    const byText = works.find((w) => w.resultText && norm(r.transcript).includes(norm(w.resultText).slice(0, 24)));
    r.speaksWork = byText?.workId ?? ordered ?? null;
  }
}
