/**
 * The console's client, as browser JavaScript (a classic script after TIMELINE_SCRIPT): connects
 * by WebRTC (microphone; events on the `oai-events` data channel) or by WebSocket (typing only;
 * audio deltas played through WebAudio), sends typed messages, and keeps the transcript, the live
 * timeline and the latency readouts up to date. An `?api_key=` on the page's URL is passed on.
 *
 * Exposes `window.venusConsole` ({ connect(mode), disconnect(), sendText(text), counts(),
 * latency(), events }) for scripted use and tests.
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var apiKey = new URLSearchParams(location.search).get('api_key');
  var model = createTimelineModel();
  var conn = null;
  var events = [];
  var transcript = new Map();
  var clientLatency = { connectMs: null, typedToAudio: [], speechToAudio: [] };
  var awaitingAudioSince = null;
  var awaitingKind = null;
  var clock = { sessionMs: 0, localMs: 0 };
  var audio = { ctx: null, playAt: 0, sources: [] };
  var renderPending = false;

  function authHeaders(extra) {
    var h = extra || {};
    if (apiKey) h.Authorization = 'Bearer ' + apiKey;
    return h;
  }
  function setStatus(text, cls) { var s = $('status'); s.textContent = text; s.className = cls || ''; }
  function sessionNow() {
    if (!conn) return model.endMs;
    return Math.max(model.endMs, clock.sessionMs + (performance.now() - clock.localMs));
  }
  function scheduleRender() {
    if (renderPending) return;
    renderPending = true;
    requestAnimationFrame(function () { renderPending = false; render(); });
  }
  function render() {
    renderTimeline($('timeline'), model, sessionNow());
    var counts = laneCounts(model);
    ['user', 'assistant', 'background'].forEach(function (lane) {
      var node = $('count-' + lane);
      node.textContent = String(counts[lane]);
      node.setAttribute('data-count', String(counts[lane]));
    });
    renderLatency();
  }
  function fmt(ms) { return ms === null || ms === undefined ? '–' : Math.round(ms) + ' ms'; }
  function stat(s) { return s ? fmt(s.last) + ' (median ' + fmt(s.median) + ', n=' + s.n + ')' : '–'; }
  function lastOf(xs) { return xs.length ? xs[xs.length - 1] : null; }
  function renderLatency() {
    var t = latencySummary(model);
    var rows = [
      ['connect', fmt(clientLatency.connectMs)],
      ['typed → first audio (this browser)', fmt(lastOf(clientLatency.typedToAudio))],
      ['speech end → first audio (this browser)', fmt(lastOf(clientLatency.speechToAudio))],
      ['input end → first audio (session clock)', stat(t.response)],
      ['delegation → running', stat(t.dispatch)],
      ['function run time', stat(t.run)],
      ['result → admitted (admission delay)', stat(t.admission)],
      ['admitted → delivered', stat(t.delivery)],
      ['late steps (missed deadlines)', t.missedSteps.n + (t.missedSteps.n ? ', worst ' + fmt(t.missedSteps.max) : '')]
    ];
    var table = $('latency');
    table.textContent = '';
    rows.forEach(function (r) {
      var tr = document.createElement('tr');
      var th = document.createElement('th'); th.textContent = r[0];
      var td = document.createElement('td'); td.textContent = r[1];
      tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
    });
  }
  function log(text, cls) {
    var box = $('log');
    var div = document.createElement('div');
    div.textContent = text; if (cls) div.className = cls;
    box.appendChild(div);
    while (box.childNodes.length > 400) box.removeChild(box.firstChild);
    box.scrollTop = box.scrollHeight;
  }
  function say(role, key, text, cls) {
    var row = transcript.get(key);
    if (!row) {
      row = document.createElement('div');
      row.className = 'turn ' + role;
      var who = document.createElement('b'); who.textContent = role + ': ';
      var body = document.createElement('span');
      row.appendChild(who); row.appendChild(body);
      $('transcript').appendChild(row);
      transcript.set(key, row);
    }
    row.lastChild.textContent += text;
    if (cls) row.classList.add(cls);
    $('transcript').scrollTop = $('transcript').scrollHeight;
  }
  function firstAudio() {
    if (awaitingAudioSince === null) return;
    var ms = performance.now() - awaitingAudioSince;
    (awaitingKind === 'typed' ? clientLatency.typedToAudio : clientLatency.speechToAudio).push(ms);
    awaitingAudioSince = null;
    scheduleRender();
  }

  function onServerEvent(ev) {
    events.push(ev);
    if (events.length > 5000) events.splice(0, 1000);
    var isAudio = /audio\.delta$/.test(ev.type) || (ev.type === 'venus.timeline' && /audio$/.test(ev.event.type));
    if (!isAudio || $('verbose').checked) {
      log(JSON.stringify(ev).slice(0, 400), ev.type === 'error' ? 'error' : ev.type.indexOf('venus.') === 0 ? 'venus' : '');
    }
    switch (ev.type) {
      case 'session.created':
        model = createTimelineModel();
        // The lanes are drawn from every timeline event, the per-chunk audio records included.
        conn.send({ type: 'session.update', session: { venus: { timeline_audio: true } } });
        setStatus('connected (' + conn.mode + ') · session ' + ev.session.id, 'ok');
        break;
      case 'venus.timeline':
        clock.sessionMs = ev.event.atMs; clock.localMs = performance.now();
        applyTimelineEvent(model, ev.event);
        if (ev.event.type === 'user.speech' && ev.event.data.state === 'stopped') {
          say('user', 'speech_' + ev.event.seq, '(speech, ' + (model.speech.length ? Math.round(ev.event.atMs - model.speech[model.speech.length - 1].start) : 0) + ' ms)', 'speech');
        }
        scheduleRender();
        break;
      case 'conversation.item.added':
        if (ev.item && ev.item.role === 'user') {
          var text = (ev.item.content || []).map(function (p) { return p.text || ''; }).join('');
          say('user', ev.item.id, text);
        }
        break;
      case 'response.output_audio_transcript.delta':
        say('assistant', ev.item_id, ev.delta);
        break;
      case 'response.done':
        var r = ev.response || {};
        if (r.status !== 'completed' && r.output && r.output[0]) say('assistant', r.output[0].id, '', 'cut');
        break;
      case 'input_audio_buffer.speech_stopped':
        if (conn && conn.mode === 'webrtc') { awaitingAudioSince = performance.now(); awaitingKind = 'speech'; }
        flushPlayback();
        break;
      case 'input_audio_buffer.speech_started':
      case 'output_audio_buffer.cleared':
        flushPlayback();
        break;
      case 'output_audio_buffer.started':
        if (conn && conn.mode === 'webrtc') firstAudio();
        break;
      case 'response.output_audio.delta':
        firstAudio();
        play(ev.delta);
        break;
      case 'error':
        setStatus('error: ' + ev.error.message, 'bad');
        break;
    }
  }

  function audioContext() {
    if (!audio.ctx) audio.ctx = new AudioContext({ sampleRate: 24000 });
    return audio.ctx;
  }
  function play(b64) {
    var bytes = Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); });
    var pcm = new Int16Array(bytes.buffer, 0, bytes.length >> 1);
    if (pcm.length === 0) return;
    var ac = audioContext();
    var buffer = ac.createBuffer(1, pcm.length, 24000);
    var data = buffer.getChannelData(0);
    for (var i = 0; i < pcm.length; i++) data[i] = pcm[i] / 32768;
    var source = ac.createBufferSource();
    source.buffer = buffer; source.connect(ac.destination);
    audio.playAt = Math.max(audio.playAt, ac.currentTime);
    source.start(audio.playAt);
    audio.playAt += buffer.duration;
    audio.sources.push(source);
    source.onended = function () { audio.sources = audio.sources.filter(function (s) { return s !== source; }); };
  }
  function flushPlayback() {
    audio.sources.forEach(function (s) { try { s.stop(); } catch (e) {} });
    audio.sources = [];
    if (audio.ctx) audio.playAt = audio.ctx.currentTime;
  }

  function connectWebSocket() {
    var started = performance.now();
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/realtime' + (apiKey ? '?api_key=' + encodeURIComponent(apiKey) : '');
    var ws = new WebSocket(url);
    audioContext().resume().catch(function () {});
    var self = { mode: 'websocket', send: function (ev) { if (ws.readyState === 1) ws.send(JSON.stringify(ev)); }, close: function () { ws.close(1000); } };
    conn = self;
    ws.onopen = function () { clientLatency.connectMs = performance.now() - started; scheduleRender(); };
    ws.onmessage = function (m) { if (conn === self) onServerEvent(JSON.parse(m.data)); };
    ws.onclose = function (e) { if (conn === self) disconnected('closed (' + e.code + ') ' + e.reason); };
  }

  async function connectWebRtc() {
    var started = performance.now();
    var mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    var pc = new RTCPeerConnection();
    var channel = pc.createDataChannel('oai-events');
    var callUrl = null;
    var pending = [];
    var self = conn = {
      mode: 'webrtc',
      send: function (ev) { if (channel.readyState === 'open') channel.send(JSON.stringify(ev)); else pending.push(ev); },
      close: function () {
        if (callUrl) fetch(callUrl + '/hangup', { method: 'POST', headers: authHeaders() }).catch(function () {});
        channel.close(); pc.close();
        mic.getTracks().forEach(function (t) { t.stop(); });
      }
    };
    channel.onopen = function () { pending.splice(0).forEach(self.send); };
    channel.onmessage = function (m) { if (conn === self) onServerEvent(JSON.parse(m.data)); };
    mic.getTracks().forEach(function (t) { pc.addTrack(t, mic); });
    pc.ontrack = function (e) {
      var player = $('player');
      player.srcObject = e.streams[0] || new MediaStream([e.track]);
      player.play().catch(function () {});
    };
    pc.onconnectionstatechange = function () {
      if (pc.connectionState === 'connected' && clientLatency.connectMs === null) {
        clientLatency.connectMs = performance.now() - started;
        scheduleRender();
      }
      if ((pc.connectionState === 'failed' || pc.connectionState === 'closed') && conn === self) disconnected('call ' + pc.connectionState);
    };
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise(function (resolve) {
      if (pc.iceGatheringState === 'complete') return resolve();
      pc.onicegatheringstatechange = function () { if (pc.iceGatheringState === 'complete') resolve(); };
      setTimeout(resolve, 2000);
    });
    var response = await fetch('/v1/realtime/calls', {
      method: 'POST', headers: authHeaders({ 'Content-Type': 'application/sdp' }), body: pc.localDescription.sdp
    });
    var body = await response.text();
    if (response.status !== 201) throw new Error('call refused (' + response.status + '): ' + body);
    callUrl = response.headers.get('Location');
    await pc.setRemoteDescription({ type: 'answer', sdp: body });
  }

  function disconnected(reason) {
    conn = null;
    setStatus(reason, 'bad');
    $('connect-webrtc').disabled = false; $('connect-ws').disabled = false; $('disconnect').disabled = true;
    scheduleRender();
  }

  function connect(mode) {
    if (conn) { var old = conn; conn = null; old.close(); }
    transcript.clear(); $('transcript').textContent = ''; $('log').textContent = '';
    events.length = 0;
    clientLatency = { connectMs: null, typedToAudio: [], speechToAudio: [] };
    model = createTimelineModel();
    setStatus('connecting (' + mode + ')…');
    $('connect-webrtc').disabled = true; $('connect-ws').disabled = true; $('disconnect').disabled = false;
    var opening = mode === 'webrtc' ? connectWebRtc() : Promise.resolve(connectWebSocket());
    return opening.catch(function (err) { if (conn) conn.close(); disconnected('could not connect: ' + err.message); });
  }

  function sendText(text) {
    if (!conn || !text) return false;
    conn.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: text }] } });
    awaitingAudioSince = performance.now(); awaitingKind = 'typed';
    return true;
  }

  $('connect-webrtc').onclick = function () { connect('webrtc'); };
  $('connect-ws').onclick = function () { connect('websocket'); };
  $('disconnect').onclick = function () { if (conn) { var c = conn; disconnected('disconnected'); c.close(); } };
  $('send').onclick = function () { if (sendText($('text').value.trim())) $('text').value = ''; };
  $('text').onkeydown = function (e) { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('send').click(); } };
  setInterval(function () { if (conn) scheduleRender(); }, 250);
  window.addEventListener('resize', scheduleRender);
  render();

  window.venusConsole = {
    connect: connect,
    disconnect: function () { $('disconnect').click(); },
    sendText: sendText,
    counts: function () { return laneCounts(model); },
    latency: function () { return { client: clientLatency, timeline: latencySummary(model) }; },
    events: events
  };
})();
`;
