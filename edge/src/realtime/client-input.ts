import { AUDIO, type ClientEvent } from '@venus/protocol';
import type { CanonicalAudioFormat } from '../audio/audio-format.ts';
import { decodeBase64Strict, decodedLength } from '../audio/base64.ts';
import type { ProtocolError } from './protocol-error.ts';

type Checked<T> = { ok: true; value: T } | { ok: false; error: ProtocolError };

/** The bytes of an `input_audio_buffer.append`, checked for size, encoding and sample alignment. */
export function appendedAudioBytes(audio: string, format: CanonicalAudioFormat): Checked<Uint8Array> {
  const size = decodedLength(audio);
  if (size > AUDIO.maxAppendBytes) {
    return fail('audio_too_large', `audio decodes to ${size} bytes; the limit is ${AUDIO.maxAppendBytes}`, 'audio');
  }
  const bytes = decodeBase64Strict(audio);
  if (bytes === undefined) return fail('audio_wrong_format', 'audio is not valid base64', 'audio');
  if (format === 'pcm16' && bytes.length % 2 !== 0) {
    return fail('audio_wrong_format', `pcm16 audio must be whole 16-bit samples, got ${bytes.length} bytes`, 'audio');
  }
  return { ok: true, value: bytes };
}

type CreatedItem = Extract<Extract<ClientEvent, { type: 'conversation.item.create' }>['item'], { type: 'message' }>;

/** The text a `conversation.item.create` gives the model: a user message's text parts, joined. */
export function userMessageText(item: CreatedItem): Checked<string> {
  if (item.role === 'system') {
    return fail('unsupported_feature', 'system messages are not supported: set session.instructions', 'item.role');
  }
  const text = item.content
    .map((part) => (part.type === 'input_text' || part.type === 'text' ? part.text : ''))
    .join('');
  if (text.trim() === '') {
    return item.content.some((part) => part.type === 'input_audio')
      ? fail(
          'unsupported_feature',
          'input_audio items are not supported: stream audio with input_audio_buffer.append',
          'item.content',
        )
      : fail('invalid_event', 'conversation.item.create: the message has no text', 'item.content');
  }
  if (text.length > 20_000) return fail('invalid_event', 'message text is over 20000 characters', 'item.content');
  return { ok: true, value: text };
}

function fail<T>(code: ProtocolError['code'], message: string, param: string): Checked<T> {
  return { ok: false, error: { code, message, param } };
}
