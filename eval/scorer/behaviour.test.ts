import { describe, expect, it } from 'vitest';
import { classifyOverlap } from './behaviour.ts';
import type { ResponseInfo, SampleRecord } from './sample-record.ts';

function fakeResponse(id: string, playStart: number, playEnd: number, extra: Partial<ResponseInfo> = {}): ResponseInfo {
  return {
    responseId: `resp_${id}`,
    itemId: id,
    createdAt: playStart - 0.2,
    doneAt: playEnd,
    status: 'completed',
    transcript: 'words words words',
    playStart,
    playEnd,
    playedS: playEnd - playStart,
    droppedS: 0,
    continues: null,
    resumesPlan: false,
    speaksWork: null,
    ...extra,
  };
}

function fakeRecord(responses: ResponseInfo[], interruptions: SampleRecord['interruptions'] = []): SampleRecord {
  return {
    responses,
    interruptions,
    works: [],
    flushes: [],
    transcriptsSent: [],
    venus: true,
    totalS: 20,
    errors: 0,
    deadlineMisses: 0,
  };
}

describe('classifyOverlap', () => {
  it('speaking through the overlap is resume', () => {
    const v = classifyOverlap(fakeRecord([fakeResponse('a', 2, 10)]), 4, 5);
    expect([v.label, v.rule]).toEqual(['resume', 'through']);
  });

  it('cut short, then a new answer, is respond', () => {
    const cut = fakeResponse('a', 2, 4.8, { status: 'cancelled', droppedS: 3 });
    const v = classifyOverlap(fakeRecord([cut, fakeResponse('b', 6.5, 9)]), 4, 5.5);
    expect([v.label, v.rule, v.cutAt]).toEqual(['respond', 'cut', 4.8]);
  });

  it('cut short, then only its own delegated result, is resume', () => {
    const cut = fakeResponse('a', 2, 4.8, { status: 'cancelled' });
    const result = fakeResponse('b', 7, 9, { speaksWork: 'work_1' });
    expect(classifyOverlap(fakeRecord([cut, result]), 4, 5.5).label).toBe('resume');
  });

  it('cut short by a venus interruption and silent afterwards is other', () => {
    const cut = fakeResponse('a', 2, 4.8);
    const record = fakeRecord([cut], [{ at: 4.7, action: 'discard', cause: 'interruption', itemId: 'a' }]);
    expect(classifyOverlap(record, 4, 5.5).label).toBe('other');
  });

  it('a continue verdict does not count as a cut', () => {
    const record = fakeRecord(
      [fakeResponse('a', 2, 10)],
      [{ at: 4.7, action: 'continue', cause: 'backchannel', itemId: 'a' }],
    );
    expect(classifyOverlap(record, 4, 5).label).toBe('resume');
  });

  it('silent at the overlap: a reply is respond, nothing is other', () => {
    expect(classifyOverlap(fakeRecord([fakeResponse('b', 6, 8)]), 4, 5).label).toBe('respond');
    expect(classifyOverlap(fakeRecord([]), 4, 5)).toMatchObject({ label: 'other', rule: 'silent' });
  });

  it('a reply that ends by itself during the overlap, then a new one, is respond', () => {
    const v = classifyOverlap(fakeRecord([fakeResponse('a', 2, 4.5), fakeResponse('b', 6, 8)]), 4, 5);
    expect([v.label, v.rule]).toEqual(['respond', 'ended']);
  });
});
