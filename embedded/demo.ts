import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import type { TimelineEvent } from '@venus/protocol';
import { RealtimeClient } from './demo/realtime-client.ts';
import { stereoWav } from './demo/stereo-wav.ts';
import { renderTimelineHtml } from './demo/timeline-html.ts';
import { startEmbeddedRuntime } from './embedded-runtime.ts';

/**
 * `npm run demo`: a scripted conversation through the public WebSocket with a synthesised user voice.
 * The user asks for the weather (delegated; the function takes seconds), the assistant keeps talking
 * while it runs, the user backchannels ("mm-hm") and the assistant talks through it, the result is
 * delivered at a pause, then the user asks for the time in Tokyo and corrects it mid-reply ("actually,
 * make it London": a repair). Writes out/demo/timeline.html, timeline.json and conversation.wav.
 */
const outDir = path.resolve(process.env.DEMO_OUT ?? 'out/demo');
const chunkMs = Number(process.env.DEMO_CHUNK_MS ?? 200);

// The narration is the demo's real output for the person watching it, so it stays on stdout.
const step = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

// VENUS_URL (e.g. http://127.0.0.1:8080, an edge of `npm run cluster`): talk to that runtime instead
// of starting the embedded one; the timeline written out is then the one the client was sent.
const remoteUrl = process.env.VENUS_URL?.replace(/\/+$/, '');
const runtime = remoteUrl
  ? null
  : await startEmbeddedRuntime({ port: 0, functions: createBuiltinFunctions({ weather: { latencyMs: 3000 } }) });
const runtimeUrl = remoteUrl ?? runtime!.url;
const tts = await EspeakTts.create();
const voice = (text: string) => tts.synthesize(text, 'en-us+f3');
const client = await RealtimeClient.connect({
  url: `${runtimeUrl.replace('http', 'ws')}/v1/realtime`,
  acknowledgePlayback: true,
});
step(`session ${client.sessionId} on ${runtimeUrl}`);
client.send({ type: 'session.update', session: { venus: { chunk_ms: chunkMs, playback_acks: true } } });

const waitTimeline = (p: (e: TimelineEvent) => boolean, ms = 30_000) => client.waitForTimeline(p, ms);

try {
  client.startMicrophone();
  await client.silence(500);
  step('user: "What\'s the weather in Paris?"');
  await client.speak(await voice("What's the weather in Paris?"));
  client.say("What's the weather in Paris?");
  const delegate = await waitTimeline((e) => e.type === 'assistant.delegate');
  step(`assistant delegated: "${delegate.type === 'assistant.delegate' ? delegate.data.query : ''}" and keeps talking`);

  await client.silence(1500);
  step('user (backchannel): "uh-huh"');
  await client.speak(await voice('uh-huh'));
  await client.silence(300);
  const backchannel = await waitTimeline((e) => e.type === 'assistant.interruption', 10_000).catch(() => null);
  step(
    `runtime read the overlap as: ${backchannel?.type === 'assistant.interruption' ? `${backchannel.data.action} (${backchannel.data.cause})` : 'no overlap event'}`,
  );

  const delivered = waitTimeline((e) => e.type === 'work.state' && e.data.state === 'DELIVERED', 60_000);
  const landed = await waitTimeline((e) => e.type === 'work.result', 30_000);
  step(`weather result landed at ${landed.atMs} ms; waiting for a pause to deliver it`);
  // Keep the microphone open (silence) while the result is delivered.
  const mic = (async () => {
    for (
      let i = 0;
      i < 30 && !client.timeline.some((e) => e.type === 'work.state' && e.data.state === 'DELIVERED');
      i++
    )
      await client.silence(500);
  })();
  const del = await delivered;
  await mic;
  step(`weather result DELIVERED at ${del.atMs} ms (playback acknowledged)`);

  await client.silence(800);
  step('user: "What time is it in Tokyo?"');
  await client.speak(await voice('What time is it in Tokyo?'));
  client.say('What time is it in Tokyo?');
  const secondStart = client.timeline.length;
  await waitTimeline((e) => e.type === 'assistant.audio' && client.timeline.indexOf(e) >= secondStart, 20_000);
  await client.silence(1200);
  step('user interrupts: "Actually, make it London."');
  const correction = client.speak(await voice('Actually, make it London.'));
  // The words reach the model as the client's early transcript, while the user is still talking.
  await client.silence(400);
  client.say('Actually, make it London.');
  await correction;
  const repair = await waitTimeline((e) => e.type === 'assistant.interruption' && e.data.action !== 'continue', 15_000);
  step(
    `runtime action: ${repair.type === 'assistant.interruption' ? `${repair.data.action}; heard so far: "${repair.data.heardText}"` : ''}`,
  );
  for (let i = 0; i < 24; i++) {
    const done = client.timeline.filter(
      (e) => e.type === 'work.state' && ['DELIVERED', 'CANCELLED', 'EXPIRED'].includes(e.data.state),
    );
    if (done.length >= 3) break;
    await client.silence(500);
  }
  await client.silence(1000);
} finally {
  mkdirSync(outDir, { recursive: true });
  const events = runtime ? await runtime.store.read(client.sessionId) : client.timeline;
  // Audio events hold MediaRefs only; the sound in conversation.wav is what the client sent and played.
  writeFileSync(path.join(outDir, 'timeline.json'), JSON.stringify(events, null, 1));
  writeFileSync(
    path.join(outDir, 'timeline.html'),
    renderTimelineHtml(events, `Realtime-Venus demo — session ${client.sessionId}`),
  );
  const user = client.userAudio.map((u) => ({ atMs: u.atMs, pcm: u.pcm24k }));
  writeFileSync(path.join(outDir, 'conversation.wav'), stereoWav(user, client.played));
  const states = events
    .filter((e) => e.type === 'work.state')
    .map((e) => (e.type === 'work.state' ? `${e.data.workId.split('_').at(-1)}:${e.data.state}` : ''));
  step(`work states: ${states.join(' ')}`);
  const said = events
    .filter((e) => e.type === 'assistant.text')
    .map((e) => (e.type === 'assistant.text' ? e.data.delta : ''))
    .join('');
  step(`assistant text: ${said}`);
  step(
    `wrote ${path.join(outDir, 'timeline.html')}, timeline.json and conversation.wav (left: user, right: assistant)`,
  );
  await client.close();
  tts.close();
  await runtime?.close();
}
