/**
 * A placeholder console: type to the assistant, hear it, talk to it with the microphone, and watch
 * the events go by. It speaks the same public protocol as any client, at `/v1/realtime`
 * (an `?api_key=` on the page's URL is passed on).
 */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Venus realtime console</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5rem; max-width: 60rem; }
textarea { width: 100%; height: 4rem; }
#log { height: 28rem; overflow-y: auto; background: #111; color: #ddd; padding: .5rem; font: 12px monospace; white-space: pre-wrap; }
.venus { color: #9cf; } .error { color: #f88; } .client { color: #8f8; }
</style>
</head>
<body>
<h1>Venus realtime console</h1>
<p id="status">connecting…</p>
<textarea id="text" placeholder="Type a message and press Send (Ctrl+Enter)"></textarea>
<p><button id="send">Send</button> <button id="mic">Start microphone</button> <label><input type="checkbox" id="verbose"> show audio deltas</label></p>
<p><strong>Assistant:</strong> <span id="transcript"></span></p>
<div id="log"></div>
<script>
const log = document.getElementById('log');
const statusLine = document.getElementById('status');
const verbose = document.getElementById('verbose');
const key = new URLSearchParams(location.search).get('api_key');
const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/realtime' + (key ? '?api_key=' + encodeURIComponent(key) : '');
const ws = new WebSocket(url);
let ctx; let playAt = 0;

function line(text, cls) {
  const div = document.createElement('div');
  div.textContent = text; if (cls) div.className = cls;
  log.appendChild(div); log.scrollTop = log.scrollHeight;
}
function send(event) { ws.send(JSON.stringify(event)); line('> ' + JSON.stringify(event).slice(0, 300), 'client'); }
function audioContext() { if (!ctx) ctx = new AudioContext({ sampleRate: 24000 }); return ctx; }
function play(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const pcm = new Int16Array(bytes.buffer, 0, bytes.length >> 1);
  const ac = audioContext(); const buffer = ac.createBuffer(1, pcm.length, 24000);
  const data = buffer.getChannelData(0); for (let i = 0; i < pcm.length; i++) data[i] = pcm[i] / 32768;
  const source = ac.createBufferSource(); source.buffer = buffer; source.connect(ac.destination);
  playAt = Math.max(playAt, ac.currentTime); source.start(playAt); playAt += buffer.duration;
}

ws.onopen = () => { statusLine.textContent = 'connected'; };
ws.onclose = (e) => { statusLine.textContent = 'closed (' + e.code + ') ' + e.reason; };
ws.onmessage = (message) => {
  const event = JSON.parse(message.data);
  if (event.type === 'response.output_audio.delta') play(event.delta);
  if (event.type === 'response.created') document.getElementById('transcript').textContent = '';
  if (event.type === 'response.output_audio_transcript.delta') document.getElementById('transcript').textContent += event.delta;
  if (event.type === 'input_audio_buffer.speech_started' && ctx) playAt = ctx.currentTime;
  const isAudio = /audio\\.delta$|^response\\.audio/.test(event.type) || (event.type === 'venus.timeline' && /audio$/.test(event.event.type));
  if (isAudio && !verbose.checked) return;
  const cls = event.type === 'error' ? 'error' : event.type.startsWith('venus.') ? 'venus' : '';
  line(JSON.stringify(event).slice(0, 400), cls);
};
document.getElementById('send').onclick = () => {
  const text = document.getElementById('text').value.trim(); if (!text) return;
  send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
  document.getElementById('text').value = '';
};
document.getElementById('text').onkeydown = (e) => { if (e.key === 'Enter' && e.ctrlKey) document.getElementById('send').click(); };
document.getElementById('mic').onclick = async (e) => {
  e.target.disabled = true;
  const ac = audioContext(); await ac.resume();
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
  const source = ac.createMediaStreamSource(stream);
  const processor = ac.createScriptProcessor(2048, 1, 1);
  processor.onaudioprocess = (ev) => {
    const input = ev.inputBuffer.getChannelData(0); const pcm = new Int16Array(input.length);
    for (let i = 0; i < input.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, input[i] * 32768));
    let binary = ''; const bytes = new Uint8Array(pcm.buffer);
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    if (ws.readyState === 1) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: btoa(binary) }));
  };
  source.connect(processor); processor.connect(ac.destination);
  e.target.textContent = 'microphone on';
};
</script>
</body>
</html>
`;
