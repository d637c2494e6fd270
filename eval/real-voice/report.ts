import type { OverlapResult, RecognitionResult, VadResult } from './checks.ts';
import type { Recording, RecordingSource } from './recordings.ts';

export interface RealVoiceReport {
  recordings: Recording[];
  sources: RecordingSource[];
  /** Sources looked for and not found, with how to install them. */
  missing: RecordingSource[];
  recognition: RecognitionResult[];
  vad: VadResult[];
  overlap: OverlapResult[];
  conditions: { date: string; command: string; loadAvg: number; realTime: boolean; assistantDbs: readonly number[] };
}

/** A level of the assistant's voice for the report: `none` for -Infinity. */
export const dbText = (db: number) => (Number.isFinite(db) ? `${db}` : 'none');

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

/** The check's results as the committed Markdown report: tables, then what they can and cannot tell. */
export function formatReport(r: RealVoiceReport): string {
  const byId = new Map(r.recordings.map((x) => [x.id, x]));
  const speech = r.recognition.filter((x) => byId.get(x.id)?.text);
  const right = speech.reduce((n, x) => n + x.withWords.right, 0);
  const total = speech.reduce((n, x) => n + x.withWords.total, 0);
  const errors = speech.reduce((n, x) => n + x.withWords.errors, 0);
  const flagged = speech.filter((x) => !x.demoOnly.inGrammar).length;
  const withSpeech = r.vad.filter((v) => byId.get(v.id)?.text);
  const vadFound = withSpeech.filter((v) => v.segments.length > 0).length;
  const silent = r.vad.filter((v) => !byId.get(v.id)?.text);
  const stops = r.overlap.filter((o) => o.verdict?.action === 'stop').length;
  const decided = r.overlap.filter((o) => o.verdict !== null).length;
  const lines: string[] = [
    '# Real-voice check',
    '',
    `Regenerate: \`${r.conditions.command}\`. Last run ${r.conditions.date}, on a shared 2-core machine ` +
      `(load average ${r.conditions.loadAvg.toFixed(2)} at the start), ${r.conditions.realTime ? 'in real time (80 ms steps on a timer)' : 'as fast as possible (80 ms steps, 15 ms between them)'}.`,
    '',
    'Real human recordings from Debian packages, read where the packages install them (none is copied',
    "into this repository), through the reference model's own perception: the recogniser, Silero VAD, and",
    "the overlap decision of the running worker's step.",
    '',
    '## Recordings and licences',
    '',
    '| source | recordings | licence | install |',
    '| --- | ---: | --- | --- |',
    ...r.sources.map(
      (s) =>
        `| ${s.name}: ${s.what} | ${r.recordings.filter((x) => x.source === s).length} | ${s.licence} | ${s.install} |`,
    ),
    ...r.missing.map((s) => `| ${s.name}: NOT FOUND on this run | 0 | ${s.licence} | ${s.install} |`),
    '',
    '## Summary',
    '',
    `- Recogniser, grammar = demo domain + the recordings' words: **${right}/${total} words right** ` +
      `(${errors} errors: substitutions, deletions, insertions) over ${speech.length} recordings with speech.`,
    `- Recogniser, demo domain alone (every recording out of grammar): **${flagged}/${speech.length} flagged** as out of grammar; ` +
      'the rest were forced onto demo phrases.',
    '- Open-vocabulary fallback: not run. The recogniser port offers none (a grammar per stream only; the phone loop in ' +
      'the wasm build is not behind the port and gives phones, not words).',
    `- VAD: speech found in ${vadFound}/${withSpeech.length} recordings with speech; ` +
      `${silent.filter((v) => v.segments.length === 0).length}/${silent.length} recordings without speech stayed silent.`,
    `- Over the assistant: ${decided}/${r.overlap.length} runs got a verdict, ${stops} of them "stop" ` +
      `(the assistant's voice in the microphone at ${r.conditions.assistantDbs.map(dbText).join(', ')} dB relative to the recording).`,
    `- ${r.overlap.filter((o) => o.inEchoBurst).length}/${r.overlap.length} runs: the VAD was already in a burst of the assistant's own voice when the recording began, ` +
      "so the user's speech ran on inside a burst that had begun (and may have been judged) before it.",
    `- Judged by the trained head in ${r.overlap.filter((o) => o.judge === 'head').length}/${decided} verdicts, by the v1 rules in ` +
      `${r.overlap.filter((o) => o.judge === 'rules').length} (the worker falls back to the rules when no head fits its features, ` +
      'when a head run fails, or when the session is not one the head applies to).',
    '',
    '## Recogniser (PocketSphinx wasm behind the recogniser port, one stream per grammar, recordings in turn)',
    '',
    '| recording | said | heard (demo + words) | right / words | conf. | heard (demo only) | demo-only conf. | flagged out of grammar |',
    '| --- | --- | --- | ---: | ---: | --- | ---: | --- |',
    ...r.recognition.map((x) => {
      const said = byId.get(x.id)?.text;
      return `| ${x.id} | ${said ?? '(no speech)'} | ${x.withWords.text || '(nothing)'} | ${said ? `${x.withWords.right}/${x.withWords.total}` : 'n/a'} | ${f1(x.withWords.confidence)} | ${x.demoOnly.text || '(nothing)'} | ${f1(x.demoOnly.confidence)} | ${x.demoOnly.inGrammar ? 'no' : 'yes'} |`;
    }),
    '',
    "## Voice activity (Silero VAD and the sessions' onset / end rules)",
    '',
    '| recording | speech stretches (ms into the recording) | frames p >= 0.5 | max p |',
    '| --- | --- | ---: | ---: |',
    ...r.vad.map(
      (v) =>
        `| ${v.id} | ${v.segments.length === 0 ? '(none)' : v.segments.map(([a, b]) => `${Math.round(a)}-${Math.round(b)}`).join(', ')} | ${(100 * v.speechShare).toFixed(0)}% | ${f1(v.maxProbability)} |`,
    ),
    '',
    "## Spoken over the assistant (the worker's step: VAD, recogniser, features, speech embedding, head or rules)",
    '',
    "Each run: the recording with the assistant quiet (so the session knows this user's level), a typed",
    "request, and 1 s into the spoken answer the same recording again, with the assistant's eSpeak NG voice",
    'leaking into the microphone at each level (none: as with perfect echo cancellation).',
    "Decision time is from the recording's speech onset (as the VAD found it) to the step that gave the verdict.",
    '',
    "| recording | assistant dB | verdicts on the assistant's voice alone, before the recording | recording began inside that burst | verdict on the recording | class | judged by | decision ms | words heard during the overlap |",
    '| --- | ---: | --- | --- | --- | --- | --- | ---: | --- |',
    ...r.overlap.map(
      (o) =>
        `| ${o.id} | ${dbText(o.assistantDb)} | ${o.echoVerdicts.map((v) => `${v.action}/${v.cause}`).join(', ') || '-'} | ${o.inEchoBurst ? 'yes' : 'no'} | ${o.verdict?.action ?? 'none'} | ${o.verdict?.cause ?? ''} | ${o.judge ?? ''} | ${o.decisionMs === null ? '' : Math.round(o.decisionMs)} | ${o.heard || '(no transcript)'} |`,
    ),
    '',
    '## What this can and cannot tell',
    '',
    '- It shows the components working on real voices and real microphones rather than on the synthetic speech',
    '  they were built and trained on: whether the recogniser hears in-grammar words, whether the VAD finds the',
    '  speech and stays quiet on noise, and what the overlap decision does with a real voice over the assistant.',
    '- It cannot measure conversational control. The ALSA clips are two words ("front center") and the',
    '  pocketsphinx clips are commands, card hands and read sentences: none is a backchannel, an interruption,',
    '  speech to someone else or background talk, so there is no right class to score the verdicts against. A',
    '  stop here means "a user talking to the assistant over it was let take the floor", which is the reasonable',
    '  reading of addressed speech, but the head was trained on other kinds of overlap too, and these clips say',
    '  nothing about how often it carries on through a real backchannel.',
    '- Few speakers (one ALSA voice, a handful of CMU and LibriVox voices), all close-talking and clean. No',
    "  conversational speech, no far-field audio, no real echo path (the assistant's voice is mixed in digitally).",
    "- Words right with the recording's own words in the grammar is an upper bound: it says the acoustic model",
    '  hears these voices, not that open speech would be understood. The demo-only run shows what happens to',
    '  speech the grammar does not cover.',
    ...(r.overlap.some((o) => o.inEchoBurst)
      ? [
          "- The assistant's own voice in the microphone (no echo cancellation in this path) is speech to Silero VAD:",
          "  with it present the session is already in a speech burst when the user starts, the user's words run on",
          '  inside that burst, and the burst and its utterance do not end while the assistant speaks, so the',
          '  recording gets a late verdict or none and no transcript. A deployment needs echo cancellation before',
          "  this path (the browser's, or the client's) or a gate on the assistant's own audio; the no-leak rows",
          '  are what the path does with clean user audio.',
        ]
      : []),
    '- Decision times are in audio time at 80 ms steps; in real time they also depend on the recogniser thread',
    '  keeping up on a loaded machine.',
    '',
  ];
  return lines.join('\n');
}
