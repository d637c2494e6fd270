import { describe, expect, it } from 'vitest';
import { InputAudioGate } from './input-audio-gate.ts';

describe('InputAudioGate (the worker held no input budget of its own)', () => {
  // What broke: a relay peer that enforced no budget (the protocol fuzz's mutated frames) queued
  // minutes of audio in the shared perception threads; every other session's answer waited ~50 s.
  it('admits real time plus the burst, refuses the rest, and reports a flood once a second', () => {
    let t = 0;
    const gate = new InputAudioGate({ rate: 1, burstMs: 1_000 }, () => t);
    expect(gate.admit(1_000).ok).toBe(true);
    const first = gate.admit(20);
    expect(first).toEqual({ ok: false, report: expect.stringContaining('20 ms in 1 frame(s) refused') });
    // Within the same second: refused, summed, not reported again.
    t = 10;
    expect(gate.admit(20)).toEqual({ ok: false, report: null });
    expect(gate.admit(20)).toEqual({ ok: false, report: null });
    // A second later the bucket refilled 1,000 ms; a flood past that is reported with what it summed.
    t = 1_010;
    expect(gate.admit(1_000).ok).toBe(true);
    const later = gate.admit(100);
    expect(later.ok).toBe(false);
    expect(!later.ok && later.report).toContain('140 ms in 3 frame(s) refused');
  });

  it('never refuses a stream that keeps real time', () => {
    let t = 0;
    const gate = new InputAudioGate({ rate: 1, burstMs: 200 }, () => t);
    for (let i = 0; i < 10_000; i++) {
      expect(gate.admit(20).ok).toBe(true);
      t += 20;
    }
  });
});
