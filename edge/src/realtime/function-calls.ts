import type { EdgeToWorkerFrame, TimelineEventOf } from '@venus/protocol';
import { responseObject } from './assistant-responses.ts';
import type { ConversationItems, FunctionCallItem } from './conversation-items.ts';
import { randomId } from './ids.ts';
import type { Emit } from './outbound-event.ts';
import type { ProtocolError } from './protocol-error.ts';

type FunctionOutputFrame = Extract<EdgeToWorkerFrame, { kind: 'function_output' }>;

export interface FunctionCallsDeps {
  emit: Emit;
  conversation: ConversationItems;
  /** Hands a client's output to the worker session as its work's result. */
  sendOutput(frame: Omit<FunctionOutputFrame, 'kind' | 'session'>): void;
}

/**
 * Calls remembered for their output. A session has at most 8 delegations in flight, so 64 leaves
 * room for outputs that come late; an output for a forgotten call is refused like an unknown one.
 */
const REMEMBERED_CALLS = 64;

/**
 * Client function calls as OpenAI clients know them. When the session's work picks one of the
 * client's tools (`work.client_call`), the client gets a response of its own holding one
 * `function_call` item (`response.output_item.added/done`, `conversation.item.added/done`,
 * `response.function_call_arguments.delta/done`), plus `venus.function_call` naming the work that
 * waits on it. Unlike OpenAI, nothing waits for the answer: the assistant keeps talking, and the
 * client's `function_call_output` item goes to the worker as the work's result, spoken under the
 * work's delivery policy.
 *
 * @example
 *   calls.call({ workId: 'work_1', callId: 'call_work_1', name: 'lookup_order', arguments: '{"order_id":"4417"}' });
 *   calls.output({ type: 'function_call_output', call_id: 'call_work_1', output: 'It shipped.' }, 'evt_1');
 */
export class FunctionCalls {
  readonly #deps: FunctionCallsDeps;
  /** Call id -> whether its output came. */
  readonly #calls = new Map<string, { answered: boolean }>();

  constructor(deps: FunctionCallsDeps) {
    this.#deps = deps;
  }

  call(data: TimelineEventOf<'work.client_call'>['data']): void {
    if (this.#calls.has(data.callId)) return; // a replayed timeline event: the client was asked already
    this.#calls.set(data.callId, { answered: false });
    if (this.#calls.size > REMEMBERED_CALLS) this.#calls.delete(this.#calls.keys().next().value ?? '');
    const { emit, conversation } = this.#deps;
    const responseId = randomId('resp');
    const item: FunctionCallItem = {
      type: 'function_call',
      id: randomId('item'),
      status: 'in_progress',
      callId: data.callId,
      name: data.name,
      arguments: '',
    };
    const where = { response_id: responseId, item_id: item.id, output_index: 0, call_id: data.callId };
    emit({ type: 'response.created', response: responseObject(responseId, 'in_progress') });
    emit({
      type: 'response.output_item.added',
      response_id: responseId,
      output_index: 0,
      item: conversation.present(item),
    });
    conversation.add(item);
    emit({ type: 'response.function_call_arguments.delta', ...where, delta: data.arguments });
    emit({ type: 'response.function_call_arguments.done', ...where, name: data.name, arguments: data.arguments });
    // The stored item is this object: the conversation sees it completed too.
    item.arguments = data.arguments;
    item.status = 'completed';
    const shown = conversation.present(item);
    emit({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: shown });
    conversation.done(item.id);
    emit({ type: 'response.done', response: { ...responseObject(responseId, 'completed'), output: [shown] } });
    emit({
      type: 'venus.function_call',
      work_id: data.workId,
      call_id: data.callId,
      item_id: item.id,
      name: data.name,
      arguments: data.arguments,
    });
  }

  /** A `function_call_output` item the client created: checked, added to the conversation, sent on. */
  output(
    item: { id?: string | undefined; call_id: string; output: string },
    itemId: string,
    eventId: string | undefined,
  ): ProtocolError | undefined {
    const call = this.#calls.get(item.call_id);
    if (call === undefined) {
      return {
        code: 'invalid_event',
        message: `no function call ${item.call_id} in this session`,
        param: 'item.call_id',
      };
    }
    if (call.answered) {
      return {
        code: 'invalid_event',
        message: `function call ${item.call_id} already has its output`,
        param: 'item.call_id',
      };
    }
    call.answered = true;
    const { conversation } = this.#deps;
    conversation.add({
      type: 'function_call_output',
      id: itemId,
      status: 'completed',
      callId: item.call_id,
      output: item.output,
    });
    conversation.done(itemId);
    this.#deps.sendOutput({ callId: item.call_id, output: item.output, ...(eventId === undefined ? {} : { eventId }) });
    return undefined;
  }
}
