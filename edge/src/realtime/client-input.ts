import { AUDIO, type ClientEvent } from '@venus/protocol';
import type { CanonicalAudioFormat } from '../audio/audio-format.ts';
import { decodeBase64Strict, decodedLength } from '../audio/base64.ts';
import type { ItemContent } from './conversation-items.ts';
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
type Part = CreatedItem['content'][number];

/** The most text one created message gives the model (the relay frame's bound). */
export const MAX_MESSAGE_TEXT = 20_000;

/** A created message as the model takes it: its text, the content echoed back, and whether audio bytes were left out. */
export interface CreatedMessage {
  text: string;
  content: ItemContent[];
  /** The item carried audio bytes besides a transcript: the transcript is what the model reads. */
  audioLeftOut: boolean;
}

/** Content part types each role may send (OpenAI's, with the beta `text` and `audio` names). */
const PARTS: Record<CreatedItem['role'], ReadonlySet<Part['type']>> = {
  user: new Set(['input_text', 'text', 'input_audio']),
  system: new Set(['input_text', 'text']),
  assistant: new Set(['output_text', 'text', 'output_audio', 'audio']),
};

/**
 * What a message of `conversation.item.create` gives the model: its text parts and the transcripts
 * of its audio parts, joined. Audio without a transcript is refused: the edge does not decode audio
 * items (stream audio with `input_audio_buffer.append`).
 */
export function createdMessage(item: CreatedItem): Checked<CreatedMessage> {
  const content: ItemContent[] = [];
  let text = '';
  let audioLeftOut = false;
  for (const [index, part] of item.content.entries()) {
    if (!PARTS[item.role].has(part.type)) {
      const message = `a ${item.role} message cannot hold ${part.type} content`;
      return fail('invalid_event', message, `item.content.${index}.type`);
    }
    if (part.type === 'input_text' || part.type === 'text' || part.type === 'output_text') {
      text += part.text;
      content.push(
        item.role === 'assistant' ? { type: 'output_text', text: part.text } : { type: 'input_text', text: part.text },
      );
      continue;
    }
    const transcript = part.transcript ?? '';
    if (transcript.trim() === '') {
      const message = `${part.type} content needs a transcript: audio items are not decoded; stream audio with input_audio_buffer.append`;
      return fail('unsupported_feature', message, `item.content.${index}.transcript`);
    }
    if (part.audio) audioLeftOut = true;
    text += (text === '' ? '' : ' ') + transcript;
    content.push(
      part.type === 'input_audio' ? { type: 'input_audio', transcript } : { type: 'output_audio', transcript },
    );
  }
  if (text.trim() === '')
    return fail('invalid_event', 'conversation.item.create: the message has no text', 'item.content');
  if (text.length > MAX_MESSAGE_TEXT) {
    return fail('invalid_event', `message text is over ${MAX_MESSAGE_TEXT} characters`, 'item.content');
  }
  return { ok: true, value: { text, content, audioLeftOut } };
}

function fail<T>(code: ProtocolError['code'], message: string, param: string): Checked<T> {
  return { ok: false, error: { code, message, param } };
}
