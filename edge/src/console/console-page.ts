import { CLIENT_SCRIPT } from './console-client-script.ts';
import { TIMELINE_SCRIPT } from './console-timeline-script.ts';

/**
 * The web console served at `/`: one static page, no build step. Connect by WebRTC (talk through
 * the microphone) or by WebSocket (type only), type messages, and watch the session as a live
 * three-lane timeline (user, assistant, background work with its states), the transcript, latency
 * readouts and the raw event log. It speaks the same public protocol as any client.
 */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Venus realtime console</title>
<style>
:root { --bg: #fafafa; --ink: #212121; --muted: #757575; --line: #e0e0e0; }
* { box-sizing: border-box; }
body { font: 14px system-ui, sans-serif; margin: 0; color: var(--ink); background: var(--bg); }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; background: #263238; color: #eceff1; flex-wrap: wrap; }
header h1 { font-size: 1.05rem; margin: 0; font-weight: 600; }
header button { font: inherit; padding: .3rem .7rem; border-radius: 4px; border: 1px solid #90a4ae; background: #37474f; color: #fff; cursor: pointer; }
header button:disabled { opacity: .45; cursor: default; }
#status { color: #b0bec5; } #status.ok { color: #a5d6a7; } #status.bad { color: #ef9a9a; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 22rem; gap: 1rem; padding: 1rem; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 0 0 .4rem; display: flex; gap: 1rem; align-items: baseline; }
.counts span { font-weight: 600; color: var(--ink); }
#timeline { width: 100%; display: block; }
#timeline .tick { stroke: #f0f0f0; } #timeline .now { stroke: #90a4ae; stroke-dasharray: 3 3; }
#timeline .lane { font-weight: 600; font-size: 12px; fill: #455a64; }
#timeline .lane-bg { fill: #fcfcfc; stroke: #f0f0f0; }
#timeline .small { font-size: 10px; fill: #37474f; } #timeline .on-bar { fill: #fff; }
#timeline .bar { opacity: .9; }
.compose { display: flex; gap: .5rem; margin-top: .6rem; }
.compose textarea { flex: 1; resize: vertical; font: inherit; padding: .45rem .6rem; border: 1px solid #b0bec5; border-radius: 4px; }
.compose button { font: inherit; padding: .45rem .9rem; }
#transcript { height: 15rem; overflow-y: auto; }
.turn { margin: .25rem 0; } .turn.user b { color: #5e35b1; } .turn.assistant b { color: #00897b; }
.turn.speech span { color: var(--muted); font-style: italic; } .turn.cut span { color: #c62828; }
#latency { width: 100%; border-collapse: collapse; font-size: 12px; }
#latency th { text-align: left; font-weight: normal; color: var(--muted); padding: .15rem 0; }
#latency td { text-align: right; font-variant-numeric: tabular-nums; }
#log { height: 14rem; overflow-y: auto; background: #111; color: #ddd; padding: .4rem; font: 11px ui-monospace, monospace; white-space: pre-wrap; border-radius: 4px; }
#log .venus { color: #9cf; } #log .error { color: #f88; }
.legend span { display: inline-block; color: #fff; padding: 0 5px; border-radius: 3px; font-size: 11px; margin: 0 2px 2px 0; }
.wide { grid-column: 1 / -1; }
</style>
</head>
<body>
<header>
  <h1>Venus realtime console</h1>
  <button id="connect-webrtc" title="WebRTC: talk through your microphone, hear the assistant">Connect · WebRTC + mic</button>
  <button id="connect-ws" title="WebSocket: type only">Connect · WebSocket (type)</button>
  <button id="disconnect" disabled>Disconnect</button>
  <span id="status">not connected</span>
</header>
<main>
  <section class="wide">
    <h2>Timeline <span class="counts">user <span id="count-user" data-count="0">0</span> · assistant <span id="count-assistant" data-count="0">0</span> · background <span id="count-background" data-count="0">0</span></span></h2>
    <svg id="timeline" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="session timeline"></svg>
    <div class="legend" id="legend"></div>
    <div class="compose">
      <textarea id="text" rows="1" placeholder="Type to the assistant and press Enter (e.g. What's the weather in Paris?)"></textarea>
      <button id="send">Send</button>
    </div>
  </section>
  <section>
    <h2>Transcript</h2>
    <div id="transcript"></div>
  </section>
  <section>
    <h2>Latency</h2>
    <table id="latency"></table>
    <audio id="player" autoplay></audio>
  </section>
  <section class="wide">
    <h2>Events <label><input type="checkbox" id="verbose"> audio events too</label></h2>
    <div id="log"></div>
  </section>
</main>
<script>
${TIMELINE_SCRIPT}
${CLIENT_SCRIPT}
(function () {
  var legend = document.getElementById('legend');
  Object.keys(STATE_COLOURS).forEach(function (state) {
    var chip = document.createElement('span');
    chip.style.background = STATE_COLOURS[state];
    chip.textContent = state;
    legend.appendChild(chip);
  });
})();
</script>
</body>
</html>
`;
