/**
 * The console's live timeline, as browser JavaScript (a classic script, no build step): a model
 * fed one `venus.timeline` event at a time, and an SVG renderer drawing it in three lanes (user,
 * assistant, background) the way the demo's static timeline does. The model is plain data with no
 * DOM, so it can be exercised outside a browser (see console-page.test.ts).
 *
 * Defines `createTimelineModel()`, `applyTimelineEvent(model, event)`, `laneCounts(model)`,
 * `latencySummary(model)` and `renderTimeline(svg, model, nowMs)`.
 */
export const TIMELINE_SCRIPT = `
var STATE_COLOURS = {
  QUEUED: '#b0bec5', RUNNING: '#42a5f5', COMPLETED: '#66bb6a', DELIVERING: '#ffa726', DELIVERED: '#2e7d32',
  FAILED: '#e53935', CANCELLING: '#ab47bc', CANCELLED: '#6a1b9a', EXPIRED: '#795548'
};
var FINAL_STATES = { DELIVERED: 1, FAILED: 1, CANCELLED: 1, EXPIRED: 1 };

function createTimelineModel() {
  return {
    events: 0, endMs: 0,
    speech: [], typed: [], utterances: new Map(), marks: [], works: new Map(), admitted: [], misses: [],
    pendingInputAt: null,
    latency: { response: [], dispatch: [], run: [], admission: [], delivery: [] }
  };
}

function applyTimelineEvent(m, e) {
  m.events += 1;
  m.endMs = Math.max(m.endMs, e.atMs);
  var d = e.data || {};
  switch (e.type) {
    case 'user.speech':
      if (d.state === 'started') m.speech.push({ start: e.atMs, end: null });
      else {
        var open = m.speech[m.speech.length - 1];
        if (open && open.end === null) open.end = e.atMs;
        m.pendingInputAt = e.atMs;
      }
      break;
    case 'user.text':
      m.typed.push({ at: e.atMs, text: d.text });
      m.pendingInputAt = e.atMs;
      break;
    case 'user.dtmf':
      m.typed.push({ at: e.atMs, text: 'DTMF ' + d.digit });
      break;
    case 'assistant.utterance':
      if (d.phase === 'started') {
        m.utterances.set(d.utteranceId, {
          id: d.utteranceId, start: e.atMs, end: e.atMs, text: '', reason: null, firstAudioAt: null,
          inputAt: m.pendingInputAt, continues: d.continues || null
        });
        m.pendingInputAt = null;
      } else {
        var done = m.utterances.get(d.utteranceId);
        if (done) { done.end = Math.max(done.end, e.atMs); done.reason = d.reason || 'completed'; }
      }
      break;
    case 'assistant.text':
      var u = m.utterances.get(d.utteranceId);
      if (u) u.text += d.delta;
      break;
    case 'assistant.audio':
      var a = m.utterances.get(d.utteranceId);
      if (a) {
        a.end = Math.max(a.end, e.atMs + d.durationMs);
        if (a.firstAudioAt === null) {
          a.firstAudioAt = e.atMs;
          if (a.inputAt !== null) m.latency.response.push(e.atMs - a.inputAt);
        }
      }
      break;
    case 'assistant.interruption':
      m.marks.push({ at: e.atMs, row: 0, colour: d.action === 'continue' ? '#9e9e9e' : '#d32f2f',
        label: d.action + ':' + d.cause, tip: d.action + ' (' + d.cause + '); heard: ' + d.heardText });
      break;
    case 'assistant.delegate':
      m.marks.push({ at: e.atMs, row: 1, colour: '#ff6f00', label: 'delegate', tip: 'delegate ' + d.workId + ': ' + d.query });
      work(m, d.workId).query = d.query;
      work(m, d.workId).delegatedAt = e.atMs;
      break;
    case 'assistant.parked':
    case 'assistant.resume_offer':
    case 'assistant.resumed':
      m.marks.push({ at: e.atMs, row: 2, colour: '#0277bd', label: e.type.replace('assistant.', ''), tip: e.type + ' ' + d.planId });
      break;
    case 'work.state':
      var w = work(m, d.workId);
      if (d.functionName) w.functionName = d.functionName;
      w.states.push({ at: e.atMs, state: d.state });
      if (d.state === 'RUNNING' && w.delegatedAt !== null && w.runningAt === null) {
        w.runningAt = e.atMs;
        m.latency.dispatch.push(e.atMs - w.delegatedAt);
      }
      if ((d.state === 'COMPLETED' || d.state === 'FAILED') && w.runningAt !== null && w.completedAt === null) {
        w.completedAt = e.atMs;
        m.latency.run.push(e.atMs - w.runningAt);
      }
      if (d.state === 'DELIVERED' && w.admittedAt !== null) m.latency.delivery.push(e.atMs - w.admittedAt);
      break;
    case 'work.admitted':
      var x = work(m, d.workId);
      x.admittedAt = e.atMs;
      if (x.completedAt !== null) m.latency.admission.push(e.atMs - x.completedAt);
      m.admitted.push({ at: e.atMs, workId: d.workId, mode: d.mode });
      break;
    case 'deadline.missed':
      m.misses.push({ at: e.atMs, lateMs: d.lateMs });
      break;
  }
}

function work(m, id) {
  var w = m.works.get(id);
  if (!w) {
    w = { id: id, query: id, functionName: null, states: [], delegatedAt: null, runningAt: null, completedAt: null, admittedAt: null };
    m.works.set(id, w);
  }
  return w;
}

/** Items drawn in each lane: speech segments and typed text; utterances and marks; work items. */
function laneCounts(m) {
  return { user: m.speech.length + m.typed.length, assistant: m.utterances.size + m.marks.length, background: m.works.size };
}

function latencySummary(m) {
  var out = {};
  Object.keys(m.latency).forEach(function (k) {
    var xs = m.latency[k].slice().sort(function (a, b) { return a - b; });
    out[k] = xs.length === 0 ? null : { last: m.latency[k][xs.length - 1], median: xs[Math.floor(xs.length / 2)], n: xs.length };
  });
  var late = m.misses.map(function (x) { return x.lateMs; });
  out.missedSteps = { n: late.length, max: late.length ? Math.max.apply(null, late) : 0 };
  return out;
}

var SVG_NS = 'http://www.w3.org/2000/svg';
var LANES = [['user', 20, 70], ['assistant', 100, 110], ['background', 220, 110]];

function renderTimeline(svg, m, nowMs) {
  var width = svg.clientWidth || 900;
  var height = 340;
  var left = 92;
  var endMs = Math.max(20000, nowMs, m.endMs) + 500;
  var x = function (ms) { return left + (ms / endMs) * (width - left - 12); };
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
  svg.setAttribute('height', String(height));
  var stepS = endMs > 120000 ? 10 : endMs > 40000 ? 5 : 1;
  for (var s = 0; s * 1000 <= endMs; s += stepS) {
    el(svg, 'line', { x1: x(s * 1000), x2: x(s * 1000), y1: 12, y2: height - 18, class: 'tick' });
    el(svg, 'text', { x: x(s * 1000) + 2, y: height - 6, class: 'small' }, s + 's');
  }
  LANES.forEach(function (lane) {
    el(svg, 'rect', { x: 0, y: lane[1] - 6, width: width, height: lane[2], class: 'lane-bg lane-' + lane[0] });
    el(svg, 'text', { x: 8, y: lane[1] + 14, class: 'lane' }, lane[0]);
  });
  el(svg, 'line', { x1: x(nowMs), x2: x(nowMs), y1: 12, y2: height - 18, class: 'now' });

  m.speech.forEach(function (sp) {
    var end = sp.end === null ? nowMs : sp.end;
    bar(svg, x(sp.start), x(end), 26, 14, '#7e57c2', 'user speech ' + sp.start + '–' + (sp.end === null ? 'now' : sp.end) + ' ms');
  });
  m.typed.forEach(function (t, i) {
    mark(svg, x(t.at), 54 + (i % 2) * 14, '#5e35b1', '“' + t.text + '”', 'typed at ' + t.at + ' ms: ' + t.text);
  });
  var row = 0;
  m.utterances.forEach(function (u) {
    row = (row + 1) % 2;
    var end = u.reason === null ? Math.max(u.end, nowMs) : u.end;
    var colour = u.reason === null ? '#4db6ac' : u.reason === 'completed' ? '#26a69a' : '#ef5350';
    var y = 106 + row * 22;
    bar(svg, x(u.start), x(end), y, 16, colour, u.id + ' (' + (u.reason || 'speaking') + '): ' + u.text);
    el(svg, 'text', { x: x(u.start) + 3, y: y + 12, class: 'small on-bar' }, clip(u.text, Math.max(4, Math.floor((x(end) - x(u.start)) / 6))));
  });
  m.marks.forEach(function (mk) { mark(svg, x(mk.at), 162 + mk.row * 18, mk.colour, mk.label, mk.tip); });
  var wrow = 0;
  m.works.forEach(function (w) {
    var y = 232 + wrow * 26;
    wrow = (wrow + 1) % 3;
    w.states.forEach(function (st, i) {
      var next = w.states[i + 1];
      var until = next ? next.at : FINAL_STATES[st.state] ? st.at + 150 : nowMs;
      bar(svg, x(st.at), Math.max(x(until), x(st.at) + 3), y, 12, STATE_COLOURS[st.state] || '#999', w.id + ' ' + st.state + ' @ ' + st.at + ' ms');
    });
    var last = w.states[w.states.length - 1];
    var first = w.states[0];
    el(svg, 'text', { x: x(first ? first.at : w.delegatedAt || 0), y: y - 2, class: 'small' },
      clip(w.query, 48) + (w.functionName ? ' [' + w.functionName + ']' : '') + ' → ' + (last ? last.state : 'delegated'));
  });
  m.admitted.forEach(function (ad) { mark(svg, x(ad.at), 318, '#ef6c00', '⇠ ' + ad.mode, 'admitted ' + ad.workId + ' (' + ad.mode + ')'); });
  m.misses.forEach(function (ms) {
    el(svg, 'rect', { x: x(ms.at) - 1, y: 12, width: 2, height: 6, fill: '#e53935' }, null, 'step late by ' + Math.round(ms.lateMs) + ' ms');
  });
}

function el(parent, name, attrs, text, tip) {
  var node = document.createElementNS(SVG_NS, name);
  Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
  if (text !== undefined && text !== null) node.textContent = text;
  if (tip) { var title = document.createElementNS(SVG_NS, 'title'); title.textContent = tip; node.appendChild(title); }
  parent.appendChild(node);
  return node;
}
function bar(svg, x1, x2, y, h, colour, tip) {
  return el(svg, 'rect', { x: x1, y: y, width: Math.max(2, x2 - x1), height: h, fill: colour, rx: 2, class: 'bar' }, null, tip);
}
function mark(svg, cx, cy, colour, label, tip) {
  el(svg, 'circle', { cx: cx, cy: cy, r: 4, fill: colour, class: 'mark' }, null, tip);
  el(svg, 'text', { x: cx + 6, y: cy + 3, class: 'small' }, clip(label, 36));
}
function clip(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + '…' : s; }
`;
