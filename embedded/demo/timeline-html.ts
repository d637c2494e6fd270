import type { TimelineEvent } from '@venus/protocol';

/**
 * Renders a session timeline as a self-contained HTML page with an SVG of three lanes: what the user
 * said and did, what the assistant said (utterances as bars, interruptions as marks), and the
 * background work (one bar per delegation, coloured by state). Hover any mark for the event.
 */
const LANES = ['user', 'assistant', 'background'] as const;
const STATE_COLOURS: Record<string, string> = {
  QUEUED: '#b0bec5',
  RUNNING: '#42a5f5',
  COMPLETED: '#66bb6a',
  DELIVERING: '#ffa726',
  DELIVERED: '#2e7d32',
  FAILED: '#e53935',
  CANCELLING: '#ab47bc',
  CANCELLED: '#6a1b9a',
  EXPIRED: '#795548',
};

const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

export function renderTimelineHtml(events: readonly TimelineEvent[], title: string): string {
  const endMs = Math.max(1000, ...events.map((e) => e.atMs)) + 500;
  const width = Math.max(1200, Math.ceil(endMs / 10));
  const x = (ms: number) => 140 + (ms / endMs) * (width - 160);
  const laneY = { user: 60, assistant: 190, background: 320 } as const;
  const parts: string[] = [];
  for (const lane of LANES) {
    parts.push(`<text x="10" y="${laneY[lane] + 5}" class="lane">${lane}</text>`);
    parts.push(`<line x1="140" x2="${width - 20}" y1="${laneY[lane]}" y2="${laneY[lane]}" class="axis"/>`);
  }
  for (let s = 0; s <= endMs / 1000; s++) {
    parts.push(`<line x1="${x(s * 1000)}" x2="${x(s * 1000)}" y1="20" y2="420" class="tick"/>`);
    parts.push(`<text x="${x(s * 1000) + 2}" y="440" class="small">${s}s</text>`);
  }
  // user: speech segments and typed text
  let speechStart: number | null = null;
  let row = 0;
  for (const e of events) {
    if (e.type === 'user.speech') {
      if (e.data.state === 'started') speechStart = e.atMs;
      else if (speechStart !== null) {
        parts.push(
          bar(x(speechStart), x(e.atMs), laneY.user - 14, 10, '#7e57c2', `user speech ${speechStart}–${e.atMs} ms`),
        );
        speechStart = null;
      }
    } else if (e.type === 'user.text') {
      row = (row + 1) % 3;
      parts.push(mark(x(e.atMs), laneY.user + 8 + row * 14, '#5e35b1', `typed: ${e.data.text}`, `“${e.data.text}”`));
    } else if (e.type === 'user.dtmf') {
      parts.push(mark(x(e.atMs), laneY.user + 8, '#5e35b1', `DTMF ${e.data.digit}`, `DTMF ${e.data.digit}`));
    }
  }
  // assistant: utterances with their text
  const utterances = new Map<string, { start: number; end: number; text: string; reason: string }>();
  for (const e of events) {
    if (e.type === 'assistant.utterance' && e.data.phase === 'started')
      utterances.set(e.data.utteranceId, { start: e.atMs, end: e.atMs, text: '', reason: '' });
    const u = 'utteranceId' in e.data ? utterances.get(String(e.data.utteranceId)) : undefined;
    if (!u) continue;
    if (e.type === 'assistant.text') u.text += e.data.delta;
    if (e.type === 'assistant.audio') u.end = Math.max(u.end, e.atMs + e.data.durationMs);
    if (e.type === 'assistant.utterance' && e.data.phase === 'finished') {
      u.end = Math.max(u.end, e.atMs);
      u.reason = e.data.reason ?? '';
    }
  }
  let urow = 0;
  for (const [id, u] of utterances) {
    urow = (urow + 1) % 2;
    const colour = u.reason === 'completed' || u.reason === '' ? '#26a69a' : '#ef5350';
    parts.push(
      bar(x(u.start), x(u.end), laneY.assistant - 16 + urow * 22, 14, colour, `${id} (${u.reason}): ${u.text}`),
    );
    parts.push(
      `<text x="${x(u.start) + 3}" y="${laneY.assistant - 5 + urow * 22}" class="small">${esc(truncate(u.text, 60))}</text>`,
    );
  }
  for (const e of events) {
    if (e.type === 'assistant.interruption') {
      const c = e.data.action === 'continue' ? '#9e9e9e' : '#d32f2f';
      parts.push(
        mark(
          x(e.atMs),
          laneY.assistant + 40,
          c,
          `${e.data.action} (${e.data.cause}); heard: ${e.data.heardText}`,
          `${e.data.action}:${e.data.cause}`,
        ),
      );
    } else if (e.type === 'assistant.delegate') {
      parts.push(
        mark(x(e.atMs), laneY.assistant + 58, '#ff6f00', `delegate ${e.data.workId}: ${e.data.query}`, `⇢ delegate`),
      );
    } else if (e.type === 'assistant.parked' || e.type === 'assistant.resume_offer' || e.type === 'assistant.resumed') {
      parts.push(
        mark(
          x(e.atMs),
          laneY.assistant + 76,
          '#0277bd',
          `${e.type} ${e.data.planId}`,
          e.type.replace('assistant.', ''),
        ),
      );
    }
  }
  // background: one bar per work item, segmented by state
  const works = new Map<string, { at: number; state: string }[]>();
  for (const e of events) {
    if (e.type !== 'work.state') continue;
    const list = works.get(e.data.workId) ?? [];
    list.push({ at: e.atMs, state: e.data.state });
    works.set(e.data.workId, list);
  }
  let wrow = 0;
  for (const [workId, states] of works) {
    const y = laneY.background - 20 + wrow * 20;
    wrow = (wrow + 1) % 5;
    states.forEach((s, i) => {
      const next = states[i + 1]?.at ?? s.at + 150;
      parts.push(
        bar(
          x(s.at),
          Math.max(x(next), x(s.at) + 3),
          y,
          12,
          STATE_COLOURS[s.state] ?? '#999',
          `${workId} ${s.state} @ ${s.at} ms`,
        ),
      );
    });
    const query = events.find((e) => e.type === 'assistant.delegate' && e.data.workId === workId);
    const label = query?.type === 'assistant.delegate' ? query.data.query : workId;
    parts.push(
      `<text x="${x(states[0]?.at ?? 0)}" y="${y - 2}" class="small">${esc(truncate(label, 50))} → ${states.at(-1)?.state}</text>`,
    );
  }
  for (const e of events) {
    if (e.type === 'work.admitted')
      parts.push(
        mark(x(e.atMs), laneY.background + 80, '#ef6c00', `admitted ${e.data.workId} (${e.data.mode})`, '⇠ backend'),
      );
  }
  const legend = Object.entries(STATE_COLOURS)
    .map(([s, c]) => `<span style="background:${c}" class="chip">${s}</span>`)
    .join(' ');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title><style>
body{font-family:system-ui,sans-serif;margin:16px;color:#222} .lane{font-weight:600;font-size:14px}
.axis{stroke:#ccc} .tick{stroke:#eee} .small{font-size:10px;fill:#333} .chip{color:#fff;padding:1px 5px;border-radius:3px;font-size:11px}
</style></head><body><h2>${esc(title)}</h2><p>${events.length} timeline events. Work states: ${legend}</p>
<svg width="${width}" height="460" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>
</body></html>`;
}

function bar(x1: number, x2: number, y: number, h: number, colour: string, tip: string): string {
  return `<rect x="${x1}" y="${y}" width="${Math.max(2, x2 - x1)}" height="${h}" fill="${colour}" opacity="0.85"><title>${esc(tip)}</title></rect>`;
}

function mark(x: number, y: number, colour: string, tip: string, label: string): string {
  return `<g><circle cx="${x}" cy="${y}" r="4" fill="${colour}"><title>${esc(tip)}</title></circle><text x="${x + 6}" y="${y + 3}" class="small">${esc(truncate(label, 40))}</text></g>`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
