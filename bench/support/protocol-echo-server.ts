import { type BareEchoServer, ID, serveOnLoopback } from './bare-echo-server.ts';
import { isAppend } from './echo-wire.ts';

/**
 * The relay benchmark's second baseline: a bare `ws` server that does the OpenAI Realtime
 * protocol's own work per frame and nothing else. It parses each `input_audio_buffer.append`,
 * decodes its base64 audio, and answers with a `response.output_audio.delta` carrying the same
 * samples re-encoded, the echo the edge sends. No session, resampling, relay or timeline. Between
 * this floor and the bare echo lies what any OpenAI-compatible server pays; above it, what the
 * edge's session and relay add.
 *
 * @example
 *   const floor = await serveProtocolEcho();
 *   // point the load client at floor.url, then:
 *   await floor.close();
 */
export async function serveProtocolEcho(): Promise<BareEchoServer> {
  return serveOnLoopback((socket) => {
    let n = 0;
    socket.on('message', (data: Buffer) => {
      if (!isAppend(data)) return;
      const { audio } = JSON.parse(data.toString('utf8')) as { audio: string };
      const pcm = Buffer.from(audio, 'base64');
      n += 1;
      const delta = {
        type: 'response.output_audio.delta',
        event_id: `event_${ID}${n}`,
        response_id: `resp_${ID}`,
        item_id: `item_${ID}`,
        output_index: 0,
        content_index: 0,
        delta: pcm.toString('base64'),
      };
      socket.send(JSON.stringify(delta));
    });
  });
}
